import { describe, expect, test } from "bun:test";
import { compareVersions } from "../../shared/semver";
import { AppError } from "../../shared/errors";
import { CHANNEL_FALLBACK, assertPublishable, coveredBySupport, sparkleVersion, unyank, versionSortKey, yank } from "./domain";

const VERSIONS = [
  "0.0.1",
  "0.9.0",
  "1.0.0-0",
  "1.0.0-2",
  "1.0.0-10",
  "1.0.0-alpha",
  "1.0.0-alpha.1",
  "1.0.0-alpha.1.0",
  "1.0.0-alpha.2",
  "1.0.0-alpha.10",
  "1.0.0-alpha.beta",
  "1.0.0-alpha-x",
  "1.0.0-alphabet",
  "1.0.0-beta",
  "1.0.0-beta.2",
  "1.0.0-beta.11",
  "1.0.0-rc.1",
  "1.0.0-Z",
  "1.0.0",
  "1.0.1-a",
  "1.0.1",
  "1.2.0",
  "1.10.0",
  "2.0.0-99999999999999999999",
  "2.0.0",
  "10.0.0",
  "9007199254740991.0.0",
];

describe("versionSortKey", () => {
  test("byte order of the keys equals semver precedence for every pair", () => {
    for (const a of VERSIONS) {
      for (const b of VERSIONS) {
        const byKey = Math.sign(Buffer.compare(Buffer.from(versionSortKey(a)), Buffer.from(versionSortKey(b))));
        expect([a, b, byKey]).toEqual([a, b, Math.sign(compareVersions(a, b))]);
      }
    }
  });

  test("build metadata does not change the key (equal precedence)", () => {
    expect(versionSortKey("1.2.3+build.7")).toBe(versionSortKey("1.2.3"));
  });

  test("refuses a non-semver string", () => {
    expect(() => versionSortKey("1.2")).toThrow();
  });
});

test("sparkleVersion keeps MAJOR.MINOR.PATCH only (Sparkle drops text after '-')", () => {
  expect(sparkleVersion("1.2.3-beta.1+b5")).toBe("1.2.3");
  expect(sparkleVersion("10.0.0")).toBe("10.0.0");
});

test("channel fallback chains (DECISIONS)", () => {
  expect(CHANNEL_FALLBACK).toEqual({
    stable: ["stable"],
    beta: ["beta", "stable"],
    alpha: ["alpha", "beta", "stable"],
    dev: ["dev", "alpha", "beta", "stable"],
  });
});

test("support cutoff: published strictly before support_until", () => {
  const until = new Date("2026-01-01T00:00:00Z");
  expect(coveredBySupport({ publishedAt: new Date("2025-12-31T23:59:59.999Z") }, until)).toBe(true);
  expect(coveredBySupport({ publishedAt: until }, until)).toBe(false);
  expect(coveredBySupport({ publishedAt: new Date("2027-01-01T00:00:00Z") }, null)).toBe(true);
});

describe("transitions", () => {
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return (e as AppError).code;
    }
    return null;
  };
  test("publish needs a draft with ≥1 artifact, all finalized", () => {
    expect(code(() => assertPublishable({ status: "draft" }, []))).toBe("CONFLICT");
    expect(code(() => assertPublishable({ status: "draft" }, [{ platform: "linux-x64", status: "pending" }]))).toBe("CONFLICT");
    expect(code(() => assertPublishable({ status: "published" }, [{ platform: "linux-x64", status: "finalized" }]))).toBe("INVALID_TRANSITION");
    expect(code(() => assertPublishable({ status: "draft" }, [{ platform: "linux-x64", status: "finalized" }]))).toBeNull();
  });
  test("yank only published, unyank only yanked", () => {
    const at = new Date(0);
    expect(yank({ status: "published" }, "bad build", at)).toEqual({ status: "yanked", yankReason: "bad build", yankedAt: at });
    expect(code(() => yank({ status: "draft" }, "x", at))).toBe("INVALID_TRANSITION");
    expect(code(() => yank({ status: "yanked" }, "x", at))).toBe("INVALID_TRANSITION");
    expect(unyank({ status: "yanked" })).toEqual({ status: "published", yankReason: null, yankedAt: null });
    expect(code(() => unyank({ status: "published" }))).toBe("INVALID_TRANSITION");
  });
});

test("wire schemas list exactly the stored enums", async () => {
  const { PlatformSchema, ChannelSchema } = await import("./model");
  const { PLATFORMS, RELEASE_CHANNELS } = await import("../../db/schema/releases");
  const { UpgradeQuery } = await import("../feeds/model");
  const { TAURI_PLATFORM_ALIASES } = await import("../feeds/domain");
  const values = (u: { anyOf: { const: string }[] }) => u.anyOf.map((l) => l.const);
  expect(values(PlatformSchema)).toEqual([...PLATFORMS]);
  expect(values(ChannelSchema)).toEqual([...RELEASE_CHANNELS]);
  expect(values(UpgradeQuery.properties.platform)).toEqual([...PLATFORMS, ...Object.keys(TAURI_PLATFORM_ALIASES)]);
});
