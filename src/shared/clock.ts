// The only module that reads the time. Domain code receives a Clock; tests inject a fixed one.
export interface Clock {
  now(): Date;
  /** Milliseconds since the epoch; same instant as now(). */
  nowMs(): number;
  /** Monotonic milliseconds for measuring durations (never for business time). */
  monotonicMs(): number;
}

export const systemClock: Clock = {
  now: () => new Date(),
  nowMs: () => Date.now(),
  monotonicMs: () => performance.now(),
};

export interface FixedClock extends Clock {
  set(at: Date | string | number): void;
  advance(ms: number): void;
}

/** A clock that stands still until told to move. */
export function fixedClock(at: Date | string | number = "2026-11-21T08:00:00.000Z"): FixedClock {
  let current = new Date(at).getTime();
  return {
    now: () => new Date(current),
    nowMs: () => current,
    monotonicMs: () => performance.now(),
    set(next) {
      current = new Date(next).getTime();
    },
    advance(ms) {
      current += ms;
    },
  };
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/**
 * The instants Keyward stores: 0001-01-01T00:00:00.000Z through 9999-12-31T23:59:59.999Z. Both engines
 * hold them (PostgreSQL refuses year 0 and the six-digit years toISOString writes past 9999, where
 * SQLite stores any number), and RFC 3339 writes them with the four-digit year it requires.
 */
export const EARLIEST_INSTANT_MS = Date.parse("0001-01-01T00:00:00.000Z");
export const LATEST_INSTANT_MS = Date.parse("9999-12-31T23:59:59.999Z");

export function isStorableInstant(ms: number): boolean {
  return ms >= EARLIEST_INSTANT_MS && ms <= LATEST_INSTANT_MS;
}

/** RFC 3339 UTC with milliseconds (DECISIONS: JSON timestamps). */
export function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}
