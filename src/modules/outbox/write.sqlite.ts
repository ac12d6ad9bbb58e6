// The one SQLite writer of side effects: every repo.sqlite.ts calls it inside the change's own
// transaction, so the audit row and the outbox rows commit or roll back with the change.
import type { Db } from "../../db/client";
import { auditLog, outbox } from "../../db/schema";
import { ringDeliveryBell } from "./bell";
import { auditRow, outboxMessages, outboxRow, type Effects } from "./effects";
import type { NewOutboxMessage, OutboxMessage } from "./repo";

export function writeEffects(db: Db, effects: Effects): void {
  if (effects.audit) db.insert(auditLog).values(auditRow(effects.audit)).run();
  const rows = outboxMessages(effects).map(outboxRow);
  if (rows.length > 0) {
    db.insert(outbox).values(rows).run();
    ringDeliveryBell();
  }
}

/** One outbox row on its own (OutboxRepo.enqueue). */
export function writeOutbox(db: Db, m: NewOutboxMessage): OutboxMessage {
  const row = outboxRow(m);
  db.insert(outbox).values(row).run();
  ringDeliveryBell();
  return row;
}
