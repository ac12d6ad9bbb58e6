// Shared by every repo.sqlite.ts that causes a side effect: called inside the change's own transaction,
// so the outbox row commits or rolls back with it.
import type { Db } from "../../db/client";
import { outbox } from "../../db/schema";
import { newId } from "../../shared/ids";
import type { NewOutboxMessage, OutboxMessage } from "./repo";

export function writeOutbox(db: Db, m: NewOutboxMessage): OutboxMessage {
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
  db.insert(outbox).values(row).run();
  return row;
}
