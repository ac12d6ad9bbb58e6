// The one SQLite writer of side effects: every repo.sqlite.ts calls it inside the change's own
// transaction, so the audit row and the outbox rows commit or roll back with the change.
//
// Its two inserts are prepared once per connection and reused: building them through drizzle's
// query builder and SQLite's prepare on every write cost more than running them (a lifecycle pass
// writes an audit row and two outbox rows per license it expires).
import { getTableColumns, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { auditLog, outbox } from "../../db/schema";
import { ringDeliveryBell } from "./bell";
import { auditRow, outboxMessages, outboxRow, type Effects } from "./effects";
import type { NewOutboxMessage, OutboxMessage } from "./repo";

/** An insert of one row of `table` with every column a placeholder named after its property. */
function preparedInsert(db: Db, table: typeof auditLog | typeof outbox) {
  const columns = Object.entries(getTableColumns(table));
  // Bare placeholders (sql``): drizzle would run a column's encoder on NULL too (a timestamp's on
  // null throws), so each value is encoded here, and NULL (or a column the row leaves out) bound as is.
  const values = Object.fromEntries(columns.map(([n]) => [n, sql`${sql.placeholder(n)}`]));
  const stmt = db.insert(table).values(values as never).prepare();
  return (row: Record<string, unknown>) =>
    stmt.run(Object.fromEntries(columns.map(([n, c]) => [n, row[n] == null ? null : c.mapToDriverValue(row[n])])));
}

interface Inserts {
  audit: (row: Record<string, unknown>) => unknown;
  outbox: (row: Record<string, unknown>) => unknown;
}
const inserts = new WeakMap<Db, Inserts>();

function insertsOf(db: Db): Inserts {
  let s = inserts.get(db);
  if (!s) {
    s = { audit: preparedInsert(db, auditLog), outbox: preparedInsert(db, outbox) };
    inserts.set(db, s);
  }
  return s;
}

export function writeEffects(db: Db, effects: Effects): void {
  const messages = outboxMessages(effects);
  if (!effects.audit && messages.length === 0) return;
  const s = insertsOf(db);
  if (effects.audit) s.audit(auditRow(effects.audit));
  if (messages.length > 0) {
    for (const m of messages) s.outbox(outboxRow(m) as unknown as Record<string, unknown>);
    ringDeliveryBell();
  }
}

/** One outbox row on its own (OutboxRepo.enqueue). */
export function writeOutbox(db: Db, m: NewOutboxMessage): OutboxMessage {
  const row = outboxRow(m);
  insertsOf(db).outbox(row as unknown as Record<string, unknown>);
  ringDeliveryBell();
  return row;
}
