// The one PostgreSQL writer of side effects: every repo.pg.ts calls it with the change's transaction
// (`tx`), so the audit row and the outbox rows commit or roll back with the change.
import { sql } from "drizzle-orm";
import type { PgExecutor } from "../../db/pg";
import { auditLog, outbox } from "../../db/schema-pg";
import { auditRow, outboxMessages, outboxRow, type Effects } from "./effects";
import type { NewOutboxMessage, OutboxMessage } from "./repo";

export async function writeEffectsPg(tx: PgExecutor, effects: Effects): Promise<void> {
  if (effects.audit) await tx.insert(auditLog).values(auditRow(effects.audit));
  const rows = outboxMessages(effects).map(outboxRow);
  // Sent together: on the transaction's one connection postgres.js pipelines them, so the NOTIFY
  // costs no extra round trip on the change's path.
  if (rows.length > 0) await Promise.all([tx.insert(outbox).values(rows), notifyDelivery(tx)]);
}

/**
 * The effects of several changes in one transaction, as one multi-row insert per table (a batch of
 * the lifecycle pass): the same rows, in the same order, as writeEffectsPg on each in turn.
 */
export async function writeEffectsManyPg(tx: PgExecutor, list: readonly Effects[]): Promise<void> {
  const audits = list.flatMap((e) => (e.audit ? [auditRow(e.audit)] : []));
  const rows = list.flatMap((e) => outboxMessages(e).map(outboxRow));
  await Promise.all([
    audits.length > 0 ? tx.insert(auditLog).values(audits) : null,
    rows.length > 0 ? tx.insert(outbox).values(rows) : null,
    rows.length > 0 ? notifyDelivery(tx) : null,
  ]);
}

/**
 * The channel every node's delivery worker LISTENs on (jobs/delivery-worker.ts). NOTIFY inside the
 * writing transaction is delivered at its commit (never for a rollback), to every listening session,
 * this node's own included. Several in one transaction are folded into one by PostgreSQL.
 */
export const DELIVERY_CHANNEL = "keyward_delivery";

/** Wakes the delivery workers when the transaction `tx` commits (a no-op for a rollback). */
export async function notifyDelivery(tx: PgExecutor): Promise<void> {
  await tx.execute(sql`SELECT pg_notify(${DELIVERY_CHANNEL}, '')`);
}

/** One outbox row on its own (OutboxRepo.enqueue). */
export async function writeOutboxPg(tx: PgExecutor, m: NewOutboxMessage): Promise<OutboxMessage> {
  const row = outboxRow(m);
  await tx.insert(outbox).values(row);
  await notifyDelivery(tx);
  return row;
}
