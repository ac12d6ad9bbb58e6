import { describe, expect, test } from "bun:test";
import { METER_RETRY_CAP_MS, retryDelayMs } from "./domain";

describe("metered-sync retry delay", () => {
  test("doubles from 30 s, with equal jitter (half fixed, half random)", () => {
    expect(retryDelayMs(1, () => 0)).toBe(15_000);
    expect(retryDelayMs(1, () => 1)).toBe(30_000);
    expect(retryDelayMs(2, () => 0)).toBe(30_000);
    expect(retryDelayMs(3, () => 0.5)).toBe(90_000);
  });
  test("capped at one hour, also for absurd attempt counts", () => {
    expect(retryDelayMs(8, () => 1)).toBe(METER_RETRY_CAP_MS);
    expect(retryDelayMs(10_000, () => 1)).toBe(METER_RETRY_CAP_MS);
    expect(retryDelayMs(10_000, () => 0)).toBe(METER_RETRY_CAP_MS / 2);
  });
});
