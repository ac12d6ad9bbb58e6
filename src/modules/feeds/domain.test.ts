import { expect, test } from "bun:test";
import { canonicalPlatform, isCritical, rfc822, sparkleOs } from "./domain";

test("critical: releases at or above the floor (they bring unsupported hosts back into support)", () => {
  expect(isCritical("1.4.0", null)).toBe(false);
  expect(isCritical("1.3.9", "1.4.0")).toBe(false);
  expect(isCritical("1.4.0", "1.4.0")).toBe(true);
  expect(isCritical("2.0.0-beta.1", "1.4.0")).toBe(true);
  expect(isCritical("1.4.0-rc.1", "1.4.0")).toBe(false);
});

test("RFC 822 dates with a numeric zone, as Sparkle parses them", () => {
  expect(rfc822(new Date("2026-11-21T08:00:00.000Z"))).toBe("Sat, 21 Nov 2026 08:00:00 +0000");
  expect(rfc822(new Date("2024-02-05T19:20:11.999Z"))).toBe("Mon, 05 Feb 2024 19:20:11 +0000");
});

test("Tauri {{target}}-{{arch}} names map to ours; ours pass through", () => {
  expect(canonicalPlatform("darwin-aarch64")).toBe("darwin-arm64");
  expect(canonicalPlatform("windows-x86_64")).toBe("windows-x64");
  expect(canonicalPlatform("linux-armv7")).toBe("linux-armhf");
  expect(canonicalPlatform("linux-x64")).toBe("linux-x64");
});

test("sparkle:os only for Windows", () => {
  expect(sparkleOs("windows-x64")).toBe("windows-x64");
  expect(sparkleOs("windows-arm64")).toBe("windows-arm64");
  expect(sparkleOs("darwin-arm64")).toBeNull();
});
