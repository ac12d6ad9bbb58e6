import { eq, lte } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { signInCodes } from "../../db/schema-pg";
import { constantTimeEqual } from "../../crypto/hash";
import { writeEffectsPg } from "../outbox/write.pg";
import type { CodeCheck, SignInCodeRepo } from "./repo";

export function createSignInCodeRepoPg(handle: PgHandle): SignInCodeRepo {
  const { db } = handle;
  return {
    async put(code, effects) {
      await db.transaction(async (tx) => {
        await tx
          .insert(signInCodes)
          .values({ ...code, attempts: 0 })
          .onConflictDoUpdate({
            target: signInCodes.email,
            set: { codeHash: code.codeHash, attempts: 0, createdAt: code.createdAt, expiresAt: code.expiresAt },
          });
        await writeEffectsPg(tx, effects);
      });
    },
    async check(email, codeHash, now, maxAttempts) {
      // The row is locked: of several nodes checking guesses at once, each sees the attempts the
      // others counted, so no more than maxAttempts guesses are ever compared.
      return await db.transaction(async (tx): Promise<CodeCheck> => {
        const [row] = await tx.select().from(signInCodes).where(eq(signInCodes.email, email)).for("update");
        if (!row || row.expiresAt.getTime() <= now.getTime() || row.attempts >= maxAttempts) return "invalid";
        if (constantTimeEqual(row.codeHash, codeHash)) {
          await tx.delete(signInCodes).where(eq(signInCodes.email, email));
          return "ok";
        }
        await tx.update(signInCodes).set({ attempts: row.attempts + 1 }).where(eq(signInCodes.email, email));
        return "invalid";
      });
    },
    async pruneExpired(now) {
      const gone = await db.delete(signInCodes).where(lte(signInCodes.expiresAt, now)).returning({ email: signInCodes.email });
      return gone.length;
    },
  };
}
