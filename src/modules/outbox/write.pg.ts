// The one PostgreSQL writer of side effects: every repo.pg.ts calls it with the change's transaction
// (`tx`), so the audit row and the outbox rows commit or roll back with the change.
import type { PgExecutor } from "../../db/pg";
import { auditLog, outbox } from "../../db/schema-pg";
import { auditRow, outboxMessages, outboxRow, type Effects } from "./effects";
import type { NewOutboxMessage, OutboxMessage } from "./repo";

export async function writeEffectsPg(tx: PgExecutor, effects: Effects): Promise<void> {
  if (effects.audit) await tx.insert(auditLog).values(auditRow(effects.audit));
  const rows = outboxMessages(effects).map(outboxRow);
  if (rows.length > 0) await tx.insert(outbox).values(rows);
}

/** One outbox row on its own (OutboxRepo.enqueue). */
export async function writeOutboxPg(tx: PgExecutor, m: NewOutboxMessage): Promise<OutboxMessage> {
  const row = outboxRow(m);
  await tx.insert(outbox).values(row);
  return row;
}
