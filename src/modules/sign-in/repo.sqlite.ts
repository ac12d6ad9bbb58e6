import { eq, lte } from "drizzle-orm";
import { immediate, type DbHandle } from "../../db/client";
import { signInCodes } from "../../db/schema";
import { constantTimeEqual } from "../../crypto/hash";
import { writeEffects } from "../outbox/write.sqlite";
import type { SignInCodeRepo } from "./repo";

export function createSignInCodeRepo(handle: DbHandle): SignInCodeRepo {
  const { db } = handle;
  return {
    async put(code, effects) {
      immediate(handle, () => {
        db.insert(signInCodes)
        .values({ ...code, attempts: 0 })
        .onConflictDoUpdate({
          target: signInCodes.email,
          set: { codeHash: code.codeHash, attempts: 0, createdAt: code.createdAt, expiresAt: code.expiresAt },
        })
        .run();
        writeEffects(db, effects);
      });
    },
    async check(email, codeHash, now, maxAttempts) {
      return immediate(handle, () => {
        const row = db.select().from(signInCodes).where(eq(signInCodes.email, email)).get();
        if (!row || row.expiresAt.getTime() <= now.getTime() || row.attempts >= maxAttempts) return "invalid";
        if (constantTimeEqual(row.codeHash, codeHash)) {
          db.delete(signInCodes).where(eq(signInCodes.email, email)).run();
          return "ok";
        }
        db.update(signInCodes).set({ attempts: row.attempts + 1 }).where(eq(signInCodes.email, email)).run();
        return "invalid";
      });
    },
    async pruneExpired(now) {
      return db.delete(signInCodes).where(lte(signInCodes.expiresAt, now)).returning({ email: signInCodes.email }).all().length;
    },
  };
}
