// SessionRepo on both engines, written once against the query seam (db/dialect/query.ts).
import { and, desc, eq, gt, inArray, lte, or, sql, type SQL } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import { afterCursor, decodeCursor, keysetPage } from "../../db/cursor";
import type { SessionFilter, SessionRepo } from "./repo";

const columnsOf = (sessions: QueryDialect["tables"]["sessions"]) => ({
  id: sessions.id,
  userId: sessions.userId,
  method: sessions.method,
  ip: sessions.ip,
  userAgent: sessions.userAgent,
  createdAt: sessions.createdAt,
  lastSeenAt: sessions.lastSeenAt,
  idleExpiresAt: sessions.idleExpiresAt,
  absoluteExpiresAt: sessions.absoluteExpiresAt,
});

/** GET /admin/sessions' one statement for a filter (exported for the query-plan test). */
export function sessionListQuery(d: QueryDialect, f: SessionFilter) {
  const { sessions } = d.tables;
  const where: SQL[] = [gt(sessions.idleExpiresAt, f.aliveAt), gt(sessions.absoluteExpiresAt, f.aliveAt)];
  if (f.userId) where.push(eq(sessions.userId, f.userId));
  if (f.cursor) where.push(afterCursor(sessions.createdAt, d.byteOrder(sessions.id), decodeCursor(f.cursor)));
  return d.db
    .select(columnsOf(sessions))
    .from(sessions)
    .where(and(...where))
    .orderBy(desc(sessions.createdAt), desc(d.byteOrder(sessions.id)))
    .limit(f.limit + 1);
}

export function createSessionRepo(d: QueryDialect): SessionRepo {
  const { db } = d;
  const { sessions } = d.tables;
  const columns = columnsOf(sessions);
  // Prepared: every signed-in request looks its session up.
  const byHash = d.prepared("session_by_token_hash", () => db.select(columns).from(sessions).where(eq(sessions.tokenHash, sql.placeholder("hash"))));
  return {
    async create(session) {
      await db.insert(sessions).values(session);
      const { tokenHash: _, ...view } = session;
      return view;
    },
    async findByTokenHash(hash) {
      return (await byHash({ hash }))[0] ?? null;
    },
    async get(id) {
      return (await db.select(columns).from(sessions).where(eq(sessions.id, id)))[0] ?? null;
    },
    async touch(id, lastSeenAt, idleExpiresAt) {
      // Best effort: while another writer holds the file or the row, the session's next request slides it.
      await d.bestEffortWrite(() => db.update(sessions).set({ lastSeenAt, idleExpiresAt }).where(eq(sessions.id, id)));
    },
    async revoke(id) {
      return (await db.delete(sessions).where(eq(sessions.id, id)).returning(columns))[0] ?? null;
    },
    async revokeAllForUser(userId) {
      return (await db.delete(sessions).where(eq(sessions.userId, userId)).returning({ id: sessions.id })).length;
    },
    async list(f) {
      return keysetPage(await sessionListQuery(d, f), f.limit);
    },
    async pruneExpired(now, limit) {
      if (limit <= 0) return 0;
      const expired = or(lte(sessions.idleExpiresAt, now), lte(sessions.absoluteExpiresAt, now))!;
      const batch = db.select({ id: sessions.id }).from(sessions).where(expired).limit(limit);
      // One statement; the condition is repeated on the DELETE: a session slid forward meanwhile stays.
      return (await db.delete(sessions).where(and(inArray(sessions.id, batch), expired)).returning({ id: sessions.id })).length;
    },
  };
}
