import { and, desc, eq, gt, inArray, lte, or, sql, type SQL } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { autocommitWrite } from "../../db/serializable.pg";
import { sessions } from "../../db/schema-pg";
import { afterCursor, decodeCursor, keysetPage } from "../../db/cursor";
import { writeEffectsPg } from "../outbox/write.pg";
import type { Session, SessionFilter, SessionRepo } from "./repo";

const columns = {
  id: sessions.id,
  userId: sessions.userId,
  method: sessions.method,
  ip: sessions.ip,
  userAgent: sessions.userAgent,
  createdAt: sessions.createdAt,
  lastSeenAt: sessions.lastSeenAt,
  idleExpiresAt: sessions.idleExpiresAt,
  absoluteExpiresAt: sessions.absoluteExpiresAt,
};
const idBytes = sql`${sessions.id} COLLATE "C"`;

/** GET /admin/sessions' one statement for a filter (exported for the query-plan test). */
export function sessionListQueryPg(db: PgHandle["db"], f: SessionFilter) {
  const where: SQL[] = [gt(sessions.idleExpiresAt, f.aliveAt), gt(sessions.absoluteExpiresAt, f.aliveAt)];
  if (f.userId) where.push(eq(sessions.userId, f.userId));
  if (f.cursor) where.push(afterCursor(sessions.createdAt, idBytes, decodeCursor(f.cursor)));
  return db
    .select(columns)
    .from(sessions)
    .where(and(...where))
    .orderBy(desc(sessions.createdAt), sql`${idBytes} DESC`)
    .limit(f.limit + 1);
}

export function createSessionRepoPg(handle: PgHandle): SessionRepo {
  const { db } = handle;
  // Prepared: every cookie-authenticated request resolves its session through this lookup.
  const byHash = db.select(columns).from(sessions).where(eq(sessions.tokenHash, sql.placeholder("hash"))).prepare("session_by_token_hash");
  return {
    async create(session) {
      await db.insert(sessions).values(session);
      const { tokenHash: _, ...rest } = session;
      return rest;
    },
    async findByTokenHash(hash) {
      return (await byHash.execute({ hash }))[0] ?? null;
    },
    async get(id) {
      return (await db.select(columns).from(sessions).where(eq(sessions.id, id)))[0] ?? null;
    },
    async touch(id, lastSeenAt, idleExpiresAt) {
      await autocommitWrite(() => db.update(sessions).set({ lastSeenAt, idleExpiresAt }).where(eq(sessions.id, id)), "skip");
    },
    async revoke(id, effects) {
      return await db.transaction(async (tx) => {
        const [gone] = await tx.delete(sessions).where(eq(sessions.id, id)).returning(columns);
        if (!gone) return null;
        if (effects) await writeEffectsPg(tx, effects);
        return gone;
      });
    },
    async revokeAllForUser(userId, effects) {
      return await db.transaction(async (tx) => {
        const gone = await tx.delete(sessions).where(eq(sessions.userId, userId)).returning({ id: sessions.id });
        if (gone.length > 0 && effects) await writeEffectsPg(tx, effects);
        return gone.length;
      });
    },
    async list(f) {
      return keysetPage(await sessionListQueryPg(db, f), f.limit);
    },
    async pruneExpired(now, limit) {
      if (limit <= 0) return 0;
      // The condition is repeated on the DELETE: a session slid forward meanwhile stays.
      const expired = or(lte(sessions.idleExpiresAt, now), lte(sessions.absoluteExpiresAt, now));
      const batch = db.select({ id: sessions.id }).from(sessions).where(expired).limit(limit);
      const gone = await db.delete(sessions).where(and(inArray(sessions.id, batch), expired)).returning({ id: sessions.id });
      return gone.length;
    },
  };
}
