import { describe, expect, test } from "bun:test";
import { createMemoryRateLimiter } from "./rate-limiter";

const MIN = 60_000;

describe("sliding-window rate limiter", () => {
  test("allows exactly `limit` hits in a window, then refuses with a Retry-After", () => {
    const rl = createMemoryRateLimiter();
    const t0 = 10 * MIN;
    for (let i = 0; i < 5; i++) expect(rl.hit("a", 5, MIN, t0 + i).allowed).toBe(true);
    const refused = rl.hit("a", 5, MIN, t0 + 10);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60);
  });

  test("keys are independent", () => {
    const rl = createMemoryRateLimiter();
    for (let i = 0; i < 3; i++) rl.hit("a", 3, MIN, 0);
    expect(rl.hit("a", 3, MIN, 1).allowed).toBe(false);
    expect(rl.hit("b", 3, MIN, 1).allowed).toBe(true);
  });

  test("the previous window still weighs in, then decays", () => {
    const rl = createMemoryRateLimiter();
    for (let i = 0; i < 10; i++) expect(rl.hit("a", 10, MIN, MIN - 1000).allowed).toBe(true);
    // Just after the boundary, the previous window counts almost fully.
    expect(rl.hit("a", 10, MIN, MIN + 1000).allowed).toBe(false);
    // Half way through, half of it remains: 5 more fit.
    let allowed = 0;
    for (let i = 0; i < 10; i++) if (rl.hit("a", 10, MIN, MIN + MIN / 2).allowed) allowed++;
    expect(allowed).toBe(5);
    // Two windows later the history is gone.
    for (let i = 0; i < 10; i++) expect(rl.hit("a", 10, MIN, 3 * MIN + i).allowed).toBe(true);
  });

  test("memory stays bounded under many distinct keys", () => {
    const rl = createMemoryRateLimiter(100);
    for (let i = 0; i < 1000; i++) expect(rl.hit(`ip-${i}`, 1, MIN, 0).allowed).toBe(true);
    // The earliest keys were evicted, so they start afresh; recent ones are still counted.
    expect(rl.hit("ip-999", 1, MIN, 1).allowed).toBe(false);
  });
});
