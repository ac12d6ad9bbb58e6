// Prompt delivery: a change whose outbox message must not wait for the next minute's deliver-outbox
// slot (a sign-in code, an invite) calls `deps.outboxNudge.nudge()` after its transaction commits.
// The nudge runs one extra deliver-outbox pass soon, through the same lease as the scheduled passes
// (jobs/runner.ts, trigger "nudge"), so nodes still never run two passes at once.
//
// It only acts while the scheduler runs (JOBS on, `keyward serve`): the scheduler starts it with the
// pass to run and stops it on shutdown. Elsewhere (CLI commands, tests with JOBS off) nudge() does
// nothing and the messages wait for a pass: a scheduled one, or one run by hand.
import { SECOND } from "../../shared/clock";

export interface OutboxNudge {
  /** Asks for a delivery pass soon. Cheap and never throws; many nudges in a burst give one pass. */
  nudge(): void;
}

/** Runs one delivery pass; false when it could not claim the lease (another pass is running). */
export type NudgedPass = () => Promise<boolean>;

export interface OutboxNudger extends OutboxNudge {
  /** From now on nudges run `pass` (called by the scheduler when it starts). */
  start(pass: NudgedPass): void;
  /** Nudges do nothing again; waits for a pass already running. */
  stop(): Promise<void>;
}

/** Timer seam: tests fire the delayed call by hand instead of waiting. */
export type Later = (fn: () => void, ms: number) => { cancel(): void };
const realLater: Later = (fn, ms) => {
  const h = setTimeout(fn, ms);
  return { cancel: () => clearTimeout(h) };
};

/** Nudges within this window after the first give one pass. */
export const NUDGE_DELAY_MS = 50;
/**
 * When the lease is held (a pass is running here or on another node, and it may have started before
 * the nudging change committed: a pass only claims what was due at its start), try again this often,
 * up to NUDGE_MAX_RETRIES times; after that the next scheduled slot delivers.
 */
export const NUDGE_RETRY_MS = SECOND;
export const NUDGE_MAX_RETRIES = 30;

export function createOutboxNudger(opts: { later?: Later; onError?: (e: unknown) => void } = {}): OutboxNudger {
  const later = opts.later ?? realLater;
  let pass: NudgedPass | null = null;
  let timer: { cancel(): void } | null = null;
  let running: Promise<void> | null = null;
  /** A nudge arrived while a pass ran: the change may have committed after that pass started. */
  let again = false;
  let retries = 0;

  const arm = (ms: number) => {
    timer = later(() => {
      timer = null;
      running = fire().finally(() => (running = null));
    }, ms);
  };

  const fire = async () => {
    if (!pass) return;
    let ran = true;
    try {
      ran = await pass();
    } catch (e) {
      // The lease could not be reached (database down): the scheduled slots retry.
      opts.onError?.(e);
    }
    if (!pass) return;
    if (!ran && retries < NUDGE_MAX_RETRIES) {
      retries += 1;
      arm(NUDGE_RETRY_MS);
      return;
    }
    retries = 0;
    if (again) {
      again = false;
      arm(NUDGE_DELAY_MS);
    }
  };

  return {
    nudge() {
      if (!pass) return;
      if (running) {
        again = true;
        return;
      }
      if (timer) return;
      arm(NUDGE_DELAY_MS);
    },
    start(p) {
      pass = p;
    },
    async stop() {
      pass = null;
      timer?.cancel();
      timer = null;
      again = false;
      retries = 0;
      await running;
    },
  };
}
