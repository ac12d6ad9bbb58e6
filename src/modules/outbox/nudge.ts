// Wakes this node's delivery worker (jobs/delivery-worker.ts) at once. Writers of outbox messages and
// webhook deliveries wake it by themselves (bell.ts on SQLite, NOTIFY on PostgreSQL); a change that
// makes existing rows deliverable without writing one (enabling an endpoint makes its pending
// deliveries due) calls `deps.outboxNudge.nudge()` after its transaction commits. Calls from changes
// that also write (a sign-in code, a test event) are harmless: wakes are folded.
//
// It only acts while the worker runs (JOBS on, `keyward serve`): the scheduler starts it with the
// worker's wake-up and stops it on shutdown. Elsewhere (CLI commands, tests with JOBS off) nudge()
// does nothing and the messages wait for a worker, or for a pass run by hand.

export interface OutboxNudge {
  /** Asks the delivery worker to look for due work now. Cheap and never throws. */
  nudge(): void;
}

export interface OutboxNudger extends OutboxNudge {
  /** From now on nudges call `wake` (called by the scheduler when it starts the worker). */
  start(wake: () => void): void;
  /** Nudges do nothing again. */
  stop(): Promise<void>;
}

export function createOutboxNudger(): OutboxNudger {
  let wake: (() => void) | null = null;
  return {
    nudge() {
      wake?.();
    },
    start(w) {
      wake = w;
    },
    async stop() {
      wake = null;
    },
  };
}
