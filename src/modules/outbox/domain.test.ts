import { describe, expect, test } from "bun:test";
import { DAY, HOUR, SECOND } from "../../shared/clock";
import { GIVE_UP_AFTER_MS, MIN_RETRY_MS, nextAttemptAfterFailure, RETRY_CAP_MS, retryDelayMs } from "./domain";

const BASE = 30 * SECOND;

describe("retryDelayMs (exponential, full jitter, capped)", () => {
  test("the ceiling doubles per failure from the base", () => {
    const top = () => 0.999999999;
    expect(retryDelayMs(1, BASE, top)).toBe(Math.floor(0.999999999 * 30_000));
    expect(retryDelayMs(2, BASE, top)).toBe(Math.floor(0.999999999 * 60_000));
    expect(retryDelayMs(5, BASE, top)).toBe(Math.floor(0.999999999 * 480_000));
  });

  test("the draw is uniform under the ceiling (full jitter), never below MIN_RETRY_MS", () => {
    expect(retryDelayMs(3, BASE, () => 0.5)).toBe(60_000);
    expect(retryDelayMs(3, BASE, () => 0.25)).toBe(30_000);
    expect(retryDelayMs(3, BASE, () => 0)).toBe(MIN_RETRY_MS);
  });

  test("capped at 6 hours however many failures", () => {
    expect(RETRY_CAP_MS).toBe(6 * HOUR);
    expect(retryDelayMs(12, BASE, () => 0.5)).toBe(3 * HOUR);
    expect(retryDelayMs(1000, BASE, () => 0.5)).toBe(3 * HOUR);
  });
});

describe("nextAttemptAfterFailure", () => {
  const created = new Date("2026-11-21T08:00:00.000Z");
  test("schedules the retry from the failure time", () => {
    const now = new Date(created.getTime() + 10 * SECOND);
    expect(nextAttemptAfterFailure(created, 1, now, BASE, () => 0.5)).toEqual(new Date(now.getTime() + 15 * SECOND));
  });

  test("gives up (null) once the message is 3 days old", () => {
    expect(GIVE_UP_AFTER_MS).toBe(3 * DAY);
    expect(nextAttemptAfterFailure(created, 30, new Date(created.getTime() + 3 * DAY - 1), BASE, () => 0.5)).not.toBeNull();
    expect(nextAttemptAfterFailure(created, 30, new Date(created.getTime() + 3 * DAY), BASE, () => 0.5)).toBeNull();
  });
});
