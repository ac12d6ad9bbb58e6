// The delivery loop of the outbox (run continuously by the delivery worker, jobs/delivery-worker.ts,
// and on demand as the deliver-outbox job pass): claim due messages whose kind has a
// handler, hand each to it, then mark it sent (or logged) or schedule a retry (domain.ts); a permanent
// failure is given up at once. Messages of kinds with no handler registered stay pending, untouched.
// Events are handed to the webhook fan-out (modules/webhooks/handler.ts), which turns each into
// webhook deliveries; the worker's webhook pool (or the deliver-webhooks pass) sends those.
import type { Deps } from "../../deps";
import { isDatabaseFailure, statementFailure } from "../../db/errors";
import { MINUTE, SECOND } from "../../shared/clock";
import { timeSlicer, yieldToEventLoop } from "../../shared/slices";
import { nextAttemptAfterFailure } from "./domain";
import { PermanentDeliveryError } from "./handlers";
import { OUTBOX_KINDS, type OutboxKind, type OutboxMessage } from "./repo";

/**
 * How long a claim keeps other nodes off a message. A handler must settle well within it (webhook
 * requests time out after seconds); past it the message is due again and may be delivered twice.
 */
export const CLAIM_LEASE_MS = 5 * MINUTE;
export const BATCH_SIZE = 25;
/** Batches per pass: bounds one pass; what is left is due for the next one. */
export const MAX_BATCHES = 20;
const MAX_ERROR_LENGTH = 1000;
/**
 * Most event-loop time a pass spends before it lets requests in. Deliveries of a batch are started
 * one after another with a slice check between them (a handler that needs no network settles at
 * once: a logged email, an event's fan-out), and still run together once they wait on the network.
 */
const SLICE_MS = 2;

export interface DeliveryCounts {
  claimed: number;
  sent: number;
  /** Emails written to the log instead of sent (no SMTP_URL): status logged. */
  logged: number;
  /** Failed, due again later. */
  retried: number;
  /** Failed for good (status failed): a permanent failure, or still failing 3 days after it was written. */
  gave_up: number;
  /** Handled, but the claim had expired and another claim took the message meanwhile. */
  lost: number;
}

type DeliveryDeps = Pick<Deps, "repos" | "clock" | "config" | "logger" | "outboxHandlers">;

export async function deliverOutbox(
  deps: DeliveryDeps,
  opts: { random?: () => number; batchSize?: number; maxBatches?: number; kinds?: readonly OutboxKind[] } = {},
): Promise<DeliveryCounts> {
  const random = opts.random ?? Math.random;
  const batchSize = opts.batchSize ?? BATCH_SIZE;
  const maxBatches = opts.maxBatches ?? MAX_BATCHES;
  const handlers = deps.outboxHandlers;
  // `kinds`: only these (the delivery worker runs one lane per kind).
  const kinds = (opts.kinds ?? OUTBOX_KINDS).filter((k) => handlers[k] !== undefined);
  const counts: DeliveryCounts = { claimed: 0, sent: 0, logged: 0, retried: 0, gave_up: 0, lost: 0 };
  if (kinds.length === 0) return counts;
  // Messages are claimed as due at the start of the pass: one that fails now is due again at least
  // MIN_RETRY_MS later, so the pass cannot loop on it.
  const start = deps.clock.now();
  const baseMs = deps.config.webhookRetryBaseSeconds * SECOND;

  const slice = timeSlicer(SLICE_MS, deps.clock);
  // Delivered messages are marked at the end of their batch, in one transaction: one commit per
  // batch instead of one per message (a lifecycle pass queues 100k emails at a million licenses). A
  // node that stops before that leaves them to be delivered again when the claim ends, as a node that
  // stops mid-delivery always did (at least once).
  let delivered: { id: string; claim: Date; status: "sent" | "logged" }[] = [];
  const recordDelivered = async () => {
    if (delivered.length === 0) return;
    const all = delivered;
    delivered = [];
    // In transactions of a default batch at most (a pass asked for larger batches marks them in
    // several), each after a slice check: a SQLite transaction holds the event loop while it runs.
    for (let i = 0; i < all.length; i += BATCH_SIZE) {
      await slice();
      const chunk = all.slice(i, i + BATCH_SIZE);
      const marked = await deps.repos.outbox.markSentMany(chunk, deps.clock.now());
      for (const m of chunk) {
        if (marked.has(m.id)) counts[m.status] += 1;
        else counts.lost += 1;
      }
    }
  };

  const deliverOne = async (m: OutboxMessage) => {
    const claim = m.nextAttemptAt;
    let status: "sent" | "logged";
    try {
      status = (await handlers[m.kind]!(m)) ?? "sent";
    } catch (e) {
      const now = deps.clock.now();
      const failures = m.attempts + 1;
      const next = e instanceof PermanentDeliveryError ? null : nextAttemptAfterFailure(m.createdAt, failures, now, baseMs, random);
      // A statement that failed: its driver's reason (drizzle's own message is the SQL with every
      // parameter value, which must not be stored), otherwise the handler's message.
      const error = (isDatabaseFailure(e) ? statementFailure(e) : e instanceof Error ? e.message : String(e)).slice(0, MAX_ERROR_LENGTH);
      if (await deps.repos.outbox.markFailed(m.id, claim, error, next)) {
        if (next) counts.retried += 1;
        else counts.gave_up += 1;
        deps.logger.warn("outbox delivery failed", { id: m.id, kind: m.kind, topic: m.topic, attempts: failures, gave_up: next === null, error });
      } else counts.lost += 1;
      return;
    }
    delivered.push({ id: m.id, claim, status });
  };

  for (let batch = 0; batch < maxBatches; batch++) {
    const claimed = await deps.repos.outbox.claimDue({ now: start, limit: batchSize, leaseUntil: new Date(deps.clock.nowMs() + CLAIM_LEASE_MS), kinds });
    counts.claimed += claimed.length;
    // One batch in parallel: handlers wait on the network, not on this process. A handler that
    // needs no network settles without it, and on SQLite every statement is synchronous: without the
    // slices a batch, and without the yield below a whole pass of MAX_BATCHES batches, held the event
    // loop from start to end (verify p99 ~60 ms while a lifecycle pass queued 100k emails).
    const started: Promise<void>[] = [];
    for (const m of claimed) {
      await slice();
      started.push(deliverOne(m));
    }
    try {
      await Promise.all(started);
    } finally {
      // Also when one of them failed to record its failure: what was delivered is marked.
      await Promise.allSettled(started);
      await recordDelivered();
    }
    if (claimed.length < batchSize) break;
    await yieldToEventLoop();
  }
  return counts;
}
