// The delivery worker: emails, event fan-out and webhook requests leave as soon as they are due, on
// every node where jobs run (JOBS on, `keyward serve`; started and stopped by the scheduler).
//
// It does not take the job lease: several nodes deliver at once, and each message is still claimed by
// one node at a time through its own claim (outbox next_attempt_at, webhook delivery next_attempt_at;
// at least once, fenced on both engines). What it does:
// - wakes on a change that wrote outbox messages or webhook deliveries (this process's writes on
//   SQLite, every node's through LISTEN/NOTIFY on PostgreSQL), on a nudge, and when one of its own
//   requests or lanes finishes;
// - otherwise polls once per POLL_MS with ONE indexed statement (OutboxRepo.nextDue), and sleeps
//   until the earliest due time when that is sooner, so a retry leaves when it becomes due. The poll
//   bounds pickup when wake-ups cannot arrive: another process on the same SQLite file, PostgreSQL
//   behind a pooler in transaction mode (no LISTEN), a lost notification;
// - delivers outbox messages in one lane per kind (a slow SMTP server does not hold up events), and
//   webhook deliveries through one rolling pool capped per node (WEBHOOK_CONCURRENCY) and per
//   endpoint (WEBHOOK_ENDPOINT_CONCURRENCY), so a receiver that never answers holds only its slots.
// It records no job runs: the deliver-outbox and deliver-webhooks job records show runs made through
// POST /admin/system/jobs/{name}/run only (docs/admin-api.md#background-jobs).
import type { Deps } from "../deps";
import { SECOND } from "../shared/clock";
import { OUTBOX_KINDS, type OutboxKind } from "../modules/outbox/repo";
import { deliverOutbox } from "../modules/outbox/service";
import { createWebhookPool, type PoolOptions } from "../modules/webhooks/deliver";

/** The longest an idle worker sleeps between two polls; bounds pickup when no wake-up arrives. */
export const POLL_MS = SECOND;
/** How long stop() waits for the LISTEN to start or end before closing anyway. */
const UNLISTEN_WAIT_MS = 2 * SECOND;

export interface DeliveryWorker {
  /** Look for due work now (folded: many wakes while busy give one more look). */
  wake(): void;
  /** Stops looking, then waits for the lanes and requests in flight (called before the database closes). */
  stop(): Promise<void>;
}

export function startDeliveryWorker(deps: Deps, opts: { pollMs?: number; pool?: PoolOptions } = {}): DeliveryWorker {
  const pollMs = opts.pollMs ?? POLL_MS;
  let stopped = false;
  let woken = false;
  let sleeper: { timer: ReturnType<typeof setTimeout>; resolve: () => void } | null = null;

  const wake = () => {
    woken = true;
    if (!sleeper) return;
    clearTimeout(sleeper.timer);
    sleeper.resolve();
    sleeper = null;
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken || stopped) return resolve();
      sleeper = {
        timer: setTimeout(() => {
          sleeper = null;
          resolve();
        }, ms),
        resolve,
      };
    });

  const pool = createWebhookPool(deps, { ...opts.pool, onSettled: wake });
  const lanes = new Map<OutboxKind, Promise<void>>();
  const runLane = (kind: OutboxKind) => {
    const lane = (async () => {
      try {
        const counts = await deliverOutbox(deps, { kinds: [kind] });
        if (counts.claimed > 0) {
          deps.logger.debug("outbox delivered", { kind, ...counts });
          // What it handed over may have made more work (an event's webhook deliveries): look again.
          wake();
        }
      } catch (error) {
        deps.logger.error("outbox delivery could not run", { kind, error });
      } finally {
        lanes.delete(kind);
      }
    })();
    lanes.set(kind, lane);
  };

  const look = async (): Promise<number> => {
    const due = await deps.repos.outbox.nextDue();
    const now = deps.clock.nowMs();
    let next = now + pollMs;
    if (due.outbox) {
      if (due.outbox.getTime() <= now) {
        for (const kind of OUTBOX_KINDS) if (deps.outboxHandlers[kind] && !lanes.has(kind)) runLane(kind);
      } else next = Math.min(next, due.outbox.getTime());
    }
    if (due.webhooks) {
      if (due.webhooks.getTime() <= now) {
        // Claims nothing when every due endpoint is at its cap: a settling request wakes the worker.
        await pool.fill(new Date(now));
        const failure = pool.takeFailure();
        if (failure !== null) deps.logger.error("webhook delivery could not be recorded", { error: failure });
      } else next = Math.min(next, due.webhooks.getTime());
    }
    return Math.max(0, next - deps.clock.nowMs());
  };

  const unlisten: Promise<(() => Promise<void>) | null> = deps.repos.outbox.onDeliveryWork(wake).catch((error) => {
    deps.logger.warn("delivery wake-ups unavailable; polling every second", { error });
    return null;
  });

  const loop = (async () => {
    while (!stopped) {
      woken = false;
      let delay = pollMs;
      try {
        delay = await look();
      } catch (error) {
        // The database could not be reached: try again at the next poll.
        deps.logger.error("delivery worker could not poll", { error });
      }
      await sleep(delay);
    }
  })();

  return {
    wake,
    async stop() {
      stopped = true;
      wake();
      await loop;
      await Promise.all([...lanes.values()]);
      await pool.drain();
      // A LISTEN that never got through (a pooler) must not hold up the shutdown.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const gaveUp = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), UNLISTEN_WAIT_MS)));
      const off = await Promise.race([unlisten, gaveUp]);
      await Promise.race([off?.(), gaveUp]);
      clearTimeout(timer);
    },
  };
}
