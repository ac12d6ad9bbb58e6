// SignInCodeRepo on both engines, written once against the query seam (db/dialect/query.ts).
import { and, count, eq, gt, inArray, lte, min } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import { CODE_FLOOD_WINDOW_MS } from "./domain";
import type { SignInCodeRepo } from "./repo";

export function createSignInCodeRepo(d: QueryDialect): SignInCodeRepo {
  const { db } = d;
  const { signInCodes } = d.tables;
  return {
    async lockAddress(email) {
      await d.lockKey(`sign_in_codes:${email}`);
    },
    async madeSince(email, since) {
      const [made] = await db
        .select({ n: count(), oldest: min(signInCodes.createdAt) })
        .from(signInCodes)
        .where(and(eq(signInCodes.email, email), gt(signInCodes.createdAt, since)));
      return { n: made?.n ?? 0, oldest: made?.oldest ?? null };
    },
    async insert(code) {
      await db.insert(signInCodes).values({ ...code, attempts: 0 });
    },
    async lock(attemptHash) {
      const columns = { codeHash: signInCodes.codeHash, expiresAt: signInCodes.expiresAt, attempts: signInCodes.attempts };
      return (await d.forUpdate(db.select(columns).from(signInCodes).where(eq(signInCodes.attemptHash, attemptHash))))[0] ?? null;
    },
    async expire(attemptHash, at) {
      await db.update(signInCodes).set({ expiresAt: at }).where(eq(signInCodes.attemptHash, attemptHash));
    },
    async setAttempts(attemptHash, attempts) {
      await db.update(signInCodes).set({ attempts }).where(eq(signInCodes.attemptHash, attemptHash));
    },
    async pruneExpired(now, limit) {
      if (limit <= 0) return 0;
      const old = lte(signInCodes.createdAt, new Date(now.getTime() - CODE_FLOOD_WINDOW_MS));
      const batch = db.select({ a: signInCodes.attemptHash }).from(signInCodes).where(old).limit(limit);
      return (await db.delete(signInCodes).where(and(inArray(signInCodes.attemptHash, batch), old)).returning({ a: signInCodes.attemptHash })).length;
    },
  };
}
