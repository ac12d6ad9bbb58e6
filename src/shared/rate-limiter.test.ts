import { describe, expect, test } from "bun:test";
import { slidingWindowDecision } from "./rate-limiter";

const MIN = 60_000;
const decide = (previous: number, current: number, intoWindowMs: number, limit = 10) =>
  slidingWindowDecision(previous, current, 10 * MIN, 10 * MIN + intoWindowMs, limit, MIN);

describe("sliding-window decision", () => {
  test("allows exactly `limit` hits in a fresh window, then refuses with a Retry-After", () => {
    expect(decide(0, 9, 1000).allowed).toBe(true);
    const refused = decide(0, 10, 1000);
    expect(refused.allowed).toBe(false);
    // With no previous window to decay, the wait is the rest of the current window.
    expect(refused.retryAfterSeconds).toBe(59);
  });

  test("the previous window weighs in by its remaining overlap", () => {
    // Just after the boundary, 10 previous hits count almost fully.
    expect(decide(10, 0, 1000).allowed).toBe(false);
    // Half way through, they weigh 5: five more fit, the sixth does not.
    expect(decide(10, 4, MIN / 2).allowed).toBe(true);
    expect(decide(10, 5, MIN / 2).allowed).toBe(false);
  });

  test("Retry-After is the time until enough of the previous window has decayed", () => {
    // estimate = 10 × 0.5 + 5 = 10; one more needs 1 hit of decay = 1/10 of a window = 6 s.
    expect(decide(10, 5, MIN / 2).retryAfterSeconds).toBe(6);
  });
});
