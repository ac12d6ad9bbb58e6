import { and, eq, lt, not, sql } from "drizzle-orm";
import type { PgHandle, PgExecutor } from "../../db/pg";
import { idempotencyKeys } from "../../db/schema-pg";
import { ClaimLostError, type ClaimCompletion, type IdempotencyRepo, type IdempotencyScope } from "./repo";

const pkOf = (s: IdempotencyScope) =>
  and(eq(idempotencyKeys.key, s.key), eq(idempotencyKeys.route, s.route), eq(idempotencyKeys.scope, s.scope));

/** Completes the claim if it is still in flight; pass the effect's transaction to commit both together. */
export async function completeClaimPg(tx: PgExecutor, c: ClaimCompletion): Promise<boolean> {
  const done = await tx
    .update(idempotencyKeys)
    .set({ state: "done", responseStatus: c.status, responseSealed: c.responseSealed, completedAt: c.at })
    .where(and(pkOf(c.scope), eq(idempotencyKeys.state, "in_flight"), eq(idempotencyKeys.createdAt, c.claimedAt)))
    .returning({ key: idempotencyKeys.key });
  return done.length === 1;
}

/** For an effect's transaction: stores the outcome or throws ClaimLostError, rolling the effect back. */
export async function storeOutcomePg(tx: PgExecutor, c: ClaimCompletion): Promise<void> {
  if (!(await completeClaimPg(tx, c))) throw new ClaimLostError();
}

/** How often a claim re-reads after losing a race to a concurrent takeover, release or prune. */
const CLAIM_ATTEMPTS = 5;

export function createIdempotencyRepoPg(handle: PgHandle): IdempotencyRepo {
  const { db } = handle;
  const pk = pkOf;

  return {
    async claim(s, bodyHash, at, expiredBefore, staleBefore) {
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        // One round trip on the common path: the expired rows of other scopes go (as on SQLite) and
        // the claim is one INSERT guarded by the primary key, so of N concurrent requests with the
        // same scope exactly one inserts, also across nodes. This scope's own expired row is not
        // deleted here (a statement cannot delete and re-insert one key); it is replaced below.
        const inserted = await db
          .with(
            db.$with("pruned").as(
              db
                .delete(idempotencyKeys)
                .where(and(lt(idempotencyKeys.createdAt, expiredBefore), not(pk(s)!)))
                .returning({ key: idempotencyKeys.key }),
            ),
          )
          .insert(idempotencyKeys)
          .values({ ...s, bodyHash, state: "in_flight", createdAt: at })
          .onConflictDoNothing()
          .returning({ key: idempotencyKeys.key });
        if (inserted.length === 1) return { kind: "claimed" };
        const [existing] = await db.select().from(idempotencyKeys).where(pk(s));
        if (!existing) continue; // released or pruned since the INSERT: insert again
        // Every takeover is conditional on the created_at just read: of two nodes taking over the same
        // row, one matches and the other re-reads (and sees the winner's fresh claim).
        const takeOver = (set: Partial<typeof idempotencyKeys.$inferInsert>) =>
          db
            .update(idempotencyKeys)
            .set(set)
            .where(and(pk(s), eq(idempotencyKeys.createdAt, existing.createdAt), eq(idempotencyKeys.state, existing.state)))
            .returning({ key: idempotencyKeys.key });
        if (existing.createdAt.getTime() < expiredBefore.getTime()) {
          // Outside the window: as if deleted and claimed afresh.
          const replaced = await takeOver({
            bodyHash,
            state: "in_flight",
            responseStatus: null,
            responseSealed: null,
            createdAt: at,
            completedAt: null,
          });
          if (replaced.length === 1) return { kind: "claimed" };
          continue;
        }
        if (existing.bodyHash !== bodyHash) return { kind: "conflict" };
        if (existing.state === "in_flight") {
          if (existing.createdAt.getTime() >= staleBefore.getTime()) return { kind: "in_flight" };
          if ((await takeOver({ createdAt: at })).length === 1) return { kind: "claimed" };
          continue;
        }
        return { kind: "replay", status: existing.responseStatus!, responseSealed: existing.responseSealed! };
      }
      throw new Error(`Idempotency claim still contended after ${CLAIM_ATTEMPTS} attempts.`);
    },
    complete: (c) => completeClaimPg(db, c),
    async release(s, claimedAt) {
      await db
        .delete(idempotencyKeys)
        .where(and(pk(s), eq(idempotencyKeys.state, "in_flight"), eq(idempotencyKeys.createdAt, claimedAt)));
    },
    async prune(before, limit) {
      if (limit <= 0) return 0;
      // The condition is repeated on the DELETE: a row reclaimed meanwhile (created_at moved) stays.
      const old = lt(idempotencyKeys.createdAt, before);
      const batch = db.select({ key: idempotencyKeys.key, route: idempotencyKeys.route, scope: idempotencyKeys.scope }).from(idempotencyKeys).where(old).limit(limit);
      const gone = await db
        .delete(idempotencyKeys)
        .where(and(sql`(${idempotencyKeys.key}, ${idempotencyKeys.route}, ${idempotencyKeys.scope}) IN (${batch})`, old))
        .returning({ key: idempotencyKeys.key });
      return gone.length;
    },
  };
}
