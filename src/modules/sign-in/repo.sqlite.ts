import { and, count, eq, gt, inArray, lte, min } from "drizzle-orm";
import { immediate, type DbHandle } from "../../db/client";
import { signInCodes } from "../../db/schema";
import { constantTimeEqual } from "../../crypto/hash";
import { writeEffects } from "../outbox/write.sqlite";
import { CODE_FLOOD_WINDOW_MS } from "./domain";
import type { SignInCodeRepo } from "./repo";

export function createSignInCodeRepo(handle: DbHandle): SignInCodeRepo {
  const { db } = handle;
  return {
    async put(code, { replaces, cap }, effects) {
      return immediate(handle, () => {
        const [made] = db.select({ n: count(), oldest: min(signInCodes.createdAt) }).from(signInCodes).where(and(eq(signInCodes.email, code.email), gt(signInCodes.createdAt, cap.since))).all();
        if (made && made.n >= cap.max && made.oldest) return { floodedSince: made.oldest };
        if (replaces !== null) db.update(signInCodes).set({ expiresAt: code.createdAt }).where(eq(signInCodes.attemptHash, replaces)).run();
        db.insert(signInCodes).values({ ...code, attempts: 0 }).run();
        writeEffects(db, effects);
        return "ok" as const;
      });
    },
    async check(attemptHash, codeHash, now, maxAttempts) {
      return immediate(handle, () => {
        const row = db.select().from(signInCodes).where(eq(signInCodes.attemptHash, attemptHash)).get();
        if (!row || row.expiresAt.getTime() <= now.getTime() || row.attempts >= maxAttempts) return "invalid";
        // Spent by expiring it now: the row stays, counted by the flood cap until pruned.
        if (constantTimeEqual(row.codeHash, codeHash)) {
          db.update(signInCodes).set({ expiresAt: now }).where(eq(signInCodes.attemptHash, attemptHash)).run();
          return "ok";
        }
        db.update(signInCodes).set({ attempts: row.attempts + 1 }).where(eq(signInCodes.attemptHash, attemptHash)).run();
        return "invalid";
      });
    },
    async pruneExpired(now, limit) {
      if (limit <= 0) return 0;
      const old = lte(signInCodes.createdAt, new Date(now.getTime() - CODE_FLOOD_WINDOW_MS));
      const batch = db.select({ a: signInCodes.attemptHash }).from(signInCodes).where(old).limit(limit);
      return db.delete(signInCodes).where(inArray(signInCodes.attemptHash, batch)).returning({ a: signInCodes.attemptHash }).all().length;
    },
  };
}
