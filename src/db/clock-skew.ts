// Nodes on one PostgreSQL database take every time-based decision with their own clock: floating
// seats expire, quota periods roll over, lockouts end, job leases lapse by it. A node whose clock is
// off by more than those margins breaks the limits across nodes (a node a minute ahead sees seats
// of other nodes as expired and lends them again). Keyward does not correct clocks; it measures each
// node's against the database server's at start and every 10 minutes, and warns when they differ.
import { MINUTE, type Clock } from "../shared/clock";
import type { Logger } from "../shared/logger";
import type { PgSql } from "./pg";

/** A difference above this (beyond half the round trip) is logged as a warning. */
export const CLOCK_SKEW_WARN_MS = 1000;
export const CLOCK_SKEW_CHECK_MS = 10 * MINUTE;

export interface ClockSkew {
  /** This node's clock minus the database server's, in ms (positive: the node is ahead). */
  skewMs: number;
  /** The measuring statement's round trip, in ms: the measurement is exact to half of it. */
  roundTripMs: number;
}

/** One measurement: the server's clock_timestamp() against the node's clock at the round trip's midpoint. */
export async function measureClockSkew(sql: PgSql, clock: Clock): Promise<ClockSkew> {
  const startedMono = clock.monotonicMs();
  const startedAt = clock.nowMs();
  const [row] = await sql<{ ms: number }[]>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`;
  const roundTripMs = clock.monotonicMs() - startedMono;
  return { skewMs: startedAt + roundTripMs / 2 - row!.ms, roundTripMs };
}

/**
 * Measures now and every `intervalMs`, and logs a warning whenever the clocks differ by more than
 * CLOCK_SKEW_WARN_MS. A measurement that fails (database unavailable) is skipped: requests report that.
 */
export function watchClockSkew(opts: { measure: () => Promise<ClockSkew>; logger: Logger; intervalMs?: number }): { first: Promise<void>; stop(): void } {
  const check = async () => {
    try {
      const { skewMs, roundTripMs } = await opts.measure();
      if (Math.abs(skewMs) > CLOCK_SKEW_WARN_MS + roundTripMs / 2) {
        opts.logger.warn("this node's clock differs from the database server's", {
          skew_ms: Math.round(skewMs),
          hint: "keep every node's clock in sync (NTP): floating seats, quota periods, lockouts and job leases are timed by each node's clock",
        });
      }
    } catch {
      // The database not answering is logged by the requests that need it.
    }
  };
  const first = check();
  const timer = setInterval(check, opts.intervalMs ?? CLOCK_SKEW_CHECK_MS);
  (timer as { unref?: () => void }).unref?.();
  return { first, stop: () => clearInterval(timer) };
}
