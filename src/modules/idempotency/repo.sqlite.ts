import { and, eq, lt } from "drizzle-orm";
import { immediate, type DbHandle } from "../../db/client";
import { idempotencyKeys } from "../../db/schema";
import type { IdempotencyRepo, IdempotencyScope } from "./repo";

export function createIdempotencyRepo(handle: DbHandle): IdempotencyRepo {
  const { db } = handle;
  const pk = (s: IdempotencyScope) =>
    and(eq(idempotencyKeys.key, s.key), eq(idempotencyKeys.route, s.route), eq(idempotencyKeys.scope, s.scope));
  const prune = (before: Date) =>
    db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, before)).returning({ key: idempotencyKeys.key }).all().length;

  return {
    claim(s, bodyHash, at, expiredBefore, staleBefore) {
      return immediate(handle, () => {
        prune(expiredBefore);
        // The claim itself is one INSERT guarded by the primary key: of N concurrent requests with the
        // same key, exactly one inserts (also across processes sharing the database).
        const inserted = db
          .insert(idempotencyKeys)
          .values({ ...s, bodyHash, state: "in_flight", createdAt: at })
          .onConflictDoNothing()
          .returning({ key: idempotencyKeys.key })
          .all();
        if (inserted.length === 1) return { kind: "claimed" as const };
        const existing = db.select().from(idempotencyKeys).where(pk(s)).get()!;
        if (existing.bodyHash !== bodyHash) return { kind: "conflict" as const };
        if (existing.state === "in_flight") {
          if (existing.createdAt.getTime() >= staleBefore.getTime()) return { kind: "in_flight" as const };
          db.update(idempotencyKeys).set({ createdAt: at }).where(pk(s)).run();
          return { kind: "claimed" as const };
        }
        return { kind: "replay" as const, status: existing.responseStatus!, responseSealed: existing.responseSealed! };
      });
    },
    complete(s, claimedAt, status, responseSealed, at) {
      // One statement and no transaction of its own: on this single connection it joins the caller's
      // open transaction (the effect's), so both commit together.
      const done = db
        .update(idempotencyKeys)
        .set({ state: "done", responseStatus: status, responseSealed, completedAt: at })
        .where(and(pk(s), eq(idempotencyKeys.state, "in_flight"), eq(idempotencyKeys.createdAt, claimedAt)))
        .returning({ key: idempotencyKeys.key })
        .all();
      return done.length === 1;
    },
    release(s, claimedAt) {
      db.delete(idempotencyKeys)
        .where(and(pk(s), eq(idempotencyKeys.state, "in_flight"), eq(idempotencyKeys.createdAt, claimedAt)))
        .run();
    },
    prune,
  };
}
