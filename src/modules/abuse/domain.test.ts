import { describe, expect, test } from "bun:test";
import { afterFailure, lockoutRemainingMs, MAX_LOCKOUT_MS, REPEAT_MEMORY_MS, type BruteForcePolicy } from "./domain";
import type { BruteForceState } from "./repo";

const policy: BruteForcePolicy = { maxFails: 3, windowMs: 300_000, baseLockoutMs: 30_000 };
const T0 = new Date("2026-11-21T08:00:00Z").getTime();
const at = (ms: number) => new Date(T0 + ms);

function fail(state: BruteForceState | null, ms: number, n = 1): BruteForceState | null {
  for (let i = 0; i < n; i++) state = afterFailure("1.2.3.4", state, at(ms), policy);
  return state;
}

describe("brute-force lockout policy", () => {
  test("locks after maxFails failures inside the window, for the base duration", () => {
    const s = fail(null, 0, 2);
    expect(lockoutRemainingMs(s, at(0))).toBe(0);
    const locked = fail(s, 1000);
    expect(lockoutRemainingMs(locked, at(1000))).toBe(30_000);
    expect(lockoutRemainingMs(locked, at(31_000))).toBe(0);
  });

  test("failures spread beyond the window do not lock", () => {
    let s = fail(null, 0, 2);
    s = fail(s, 300_000); // window restarted: this is failure 1 of a new window
    expect(lockoutRemainingMs(s, at(300_000))).toBe(0);
    expect(s!.fails).toBe(1);
  });

  test("each repeat doubles, capped at one hour", () => {
    let s: BruteForceState | null = null;
    let t = 0;
    const lengths: number[] = [];
    for (let round = 0; round < 10; round++) {
      s = fail(s, t, policy.maxFails);
      const len = lockoutRemainingMs(s, at(t));
      lengths.push(len);
      t += len; // wait the lockout out, then fail again
    }
    expect(lengths.slice(0, 5)).toEqual([30_000, 60_000, 120_000, 240_000, 480_000]);
    expect(Math.max(...lengths)).toBe(MAX_LOCKOUT_MS);
    expect(lengths[9]).toBe(MAX_LOCKOUT_MS);
  });

  test("an address that behaves for a day starts over at the base length", () => {
    let s = fail(null, 0, policy.maxFails);
    s = fail(s, 30_000, policy.maxFails); // repeat: 60 s
    expect(lockoutRemainingMs(s, at(30_000))).toBe(60_000);
    const later = 90_000 + REPEAT_MEMORY_MS;
    s = fail(s, later, policy.maxFails);
    expect(lockoutRemainingMs(s, at(later))).toBe(30_000);
  });
});
