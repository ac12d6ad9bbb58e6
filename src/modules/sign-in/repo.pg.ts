import { and, count, eq, gt, inArray, lte, min } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { serializable } from "../../db/serializable.pg";
import { signInCodes } from "../../db/schema-pg";
import { constantTimeEqual } from "../../crypto/hash";
import { writeEffectsPg } from "../outbox/write.pg";
import { CODE_FLOOD_WINDOW_MS } from "./domain";
import type { CodeCheck, SignInCodeRepo } from "./repo";

export function createSignInCodeRepoPg(handle: PgHandle): SignInCodeRepo {
  const { db } = handle;
  return {
    async put(code, { replaces, cap }, effects) {
      // SERIALIZABLE: of several nodes adding codes for one address at once, the count one of them
      // read is stale only if another inserted meanwhile, and then it is aborted and run again; the
      // cap holds exactly.
      return await serializable(db, async (tx) => {
        const [made] = await tx.select({ n: count(), oldest: min(signInCodes.createdAt) }).from(signInCodes).where(and(eq(signInCodes.email, code.email), gt(signInCodes.createdAt, cap.since)));
        if (made && made.n >= cap.max && made.oldest) return { floodedSince: made.oldest };
        if (replaces !== null) await tx.update(signInCodes).set({ expiresAt: code.createdAt }).where(eq(signInCodes.attemptHash, replaces));
        await tx.insert(signInCodes).values({ ...code, attempts: 0 });
        await writeEffectsPg(tx, effects);
        return "ok" as const;
      });
    },
    async check(attemptHash, codeHash, now, maxAttempts) {
      // The row is locked: of several nodes checking guesses at once, each sees the attempts the
      // others counted, so no more than maxAttempts guesses are ever compared.
      return await db.transaction(async (tx): Promise<CodeCheck> => {
        const [row] = await tx.select().from(signInCodes).where(eq(signInCodes.attemptHash, attemptHash)).for("update");
        if (!row || row.expiresAt.getTime() <= now.getTime() || row.attempts >= maxAttempts) return "invalid";
        // Spent by expiring it now: the row stays, counted by the flood cap until pruned.
        if (constantTimeEqual(row.codeHash, codeHash)) {
          await tx.update(signInCodes).set({ expiresAt: now }).where(eq(signInCodes.attemptHash, attemptHash));
          return "ok";
        }
        await tx.update(signInCodes).set({ attempts: row.attempts + 1 }).where(eq(signInCodes.attemptHash, attemptHash));
        return "invalid";
      });
    },
    async pruneExpired(now, limit) {
      if (limit <= 0) return 0;
      const old = lte(signInCodes.createdAt, new Date(now.getTime() - CODE_FLOOD_WINDOW_MS));
      const batch = db.select({ a: signInCodes.attemptHash }).from(signInCodes).where(old).limit(limit);
      const gone = await db.delete(signInCodes).where(and(inArray(signInCodes.attemptHash, batch), old)).returning({ a: signInCodes.attemptHash });
      return gone.length;
    },
  };
}
