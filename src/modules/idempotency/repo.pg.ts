import { and, eq } from "drizzle-orm";
import { idempotencyKeys } from "../../db/schema-pg";
import type { PgExecutor } from "../audit/write.pg";
import { ClaimLostError, type ClaimCompletion, type IdempotencyScope } from "./repo";

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
