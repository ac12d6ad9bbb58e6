// A clock that runs with real time (the delivery worker sleeps until due times by real timers), yet
// can be moved like a fixed one: set() and advance() shift it by an offset.
import type { FixedClock } from "../../src/shared/clock";

export function runningClock(at?: Date | string | number): FixedClock {
  let offset = at === undefined ? 0 : new Date(at).getTime() - Date.now();
  return {
    now: () => new Date(Date.now() + offset),
    nowMs: () => Date.now() + offset,
    monotonicMs: () => performance.now(),
    set(next) {
      offset = new Date(next).getTime() - Date.now();
    },
    advance(ms) {
      offset += ms;
    },
  };
}
