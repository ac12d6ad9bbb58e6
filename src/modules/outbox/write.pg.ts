// Shared by every repo.pg.ts that causes a side effect: called with the change's transaction (`tx`),
// so the outbox row commits or rolls back with it.
import { outbox } from "../../db/schema-pg";
import { newId } from "../../shared/ids";
import type { PgExecutor } from "../audit/write.pg";
import type { NewOutboxMessage, OutboxMessage } from "./repo";

export async function writeOutboxPg(tx: PgExecutor, m: NewOutboxMessage): Promise<OutboxMessage> {
  const row = {
    id: newId(),
    kind: m.kind,
    topic: m.topic,
    payload: m.payload,
    status: "pending" as const,
    attempts: 0,
    nextAttemptAt: m.at,
    lastError: null,
    createdAt: m.at,
    sentAt: null,
  };
  await tx.insert(outbox).values(row);
  return row;
}
