import { and, eq, lt, sql } from "drizzle-orm";
import { lift, immediate, type DbHandle } from "../../db/client";
import { idempotencyKeys } from "../../db/schema";
import { ClaimLostError, type ClaimCompletion, type IdempotencyRepo, type IdempotencyScope } from "./repo";

const pkOf = (s: IdempotencyScope) =>
  and(eq(idempotencyKeys.key, s.key), eq(idempotencyKeys.route, s.route), eq(idempotencyKeys.scope, s.scope));

/** Completes the claim if it is still in flight; one statement, so it joins an open transaction. */
export function completeClaim(handle: DbHandle, c: ClaimCompletion): boolean {
  const done = handle.db
    .update(idempotencyKeys)
    .set({ state: "done", responseStatus: c.status, responseSealed: c.responseSealed, completedAt: c.at })
    .where(and(pkOf(c.scope), eq(idempotencyKeys.state, "in_flight"), eq(idempotencyKeys.createdAt, c.claimedAt)))
    .returning({ key: idempotencyKeys.key })
    .all();
  return done.length === 1;
}

/** For an effect's transaction: stores the outcome or throws ClaimLostError, rolling the effect back. */
export function storeOutcome(handle: DbHandle, c: ClaimCompletion): void {
  if (!completeClaim(handle, c)) throw new ClaimLostError();
}

/** Expired rows a claim deletes besides its own (bounded work on the request path). */
const CLAIM_PRUNE_BATCH = 100;

export function createIdempotencyRepo(handle: DbHandle): IdempotencyRepo {
  const { db } = handle;
  const pk = pkOf;
  const prune = (before: Date, limit: number) => {
    if (limit <= 0) return 0;
    const batch = db.select({ key: idempotencyKeys.key, route: idempotencyKeys.route, scope: idempotencyKeys.scope }).from(idempotencyKeys).where(lt(idempotencyKeys.createdAt, before)).limit(limit);
    return db
      .delete(idempotencyKeys)
      .where(sql`(${idempotencyKeys.key}, ${idempotencyKeys.route}, ${idempotencyKeys.scope}) IN (${batch})`)
      .returning({ key: idempotencyKeys.key })
      .all().length;
  };

  return {
    async claim(s, bodyHash, at, expiredBefore, staleBefore) {
      return immediate(handle, () => {
        // This claim's own expired row, then a bounded batch of others (the hourly pass does the rest):
        // a claim after a quiet day must not delete the whole day's rows inside the request.
        db.delete(idempotencyKeys).where(and(pk(s), lt(idempotencyKeys.createdAt, expiredBefore))).run();
        prune(expiredBefore, CLAIM_PRUNE_BATCH);
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
    async complete(c) {
      return completeClaim(handle, c);
    },
    async release(s, claimedAt) {
      db.delete(idempotencyKeys)
        .where(and(pk(s), eq(idempotencyKeys.state, "in_flight"), eq(idempotencyKeys.createdAt, claimedAt)))
        .run();
    },
    prune: async (before, limit) => prune(before, limit),
  };
}
