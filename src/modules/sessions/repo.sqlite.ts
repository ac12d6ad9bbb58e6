import { and, desc, eq, gt, inArray, lte, or, sql, type SQL } from "drizzle-orm";
import { immediate, lazyStatement, lift, writeUnlessLocked, type DbHandle } from "../../db/client";
import { sessions } from "../../db/schema";
import { afterCursor, decodeCursor, keysetPage } from "../../db/cursor";
import { writeEffects } from "../outbox/write.sqlite";
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

/** GET /admin/sessions' one statement for a filter (exported for the query-plan test). */
export function sessionListQuery(db: DbHandle["db"], f: SessionFilter) {
  const where: SQL[] = [gt(sessions.idleExpiresAt, f.aliveAt), gt(sessions.absoluteExpiresAt, f.aliveAt)];
  if (f.userId) where.push(eq(sessions.userId, f.userId));
  if (f.cursor) where.push(afterCursor(sessions.createdAt, sessions.id, decodeCursor(f.cursor)));
  return db
    .select(columns)
    .from(sessions)
    .where(and(...where))
    .orderBy(desc(sessions.createdAt), desc(sessions.id))
    .limit(f.limit + 1);
}

export function createSessionRepo(handle: DbHandle): SessionRepo {
  const { db } = handle;
  // Prepared: every cookie-authenticated request resolves its session through this lookup.
  const byHash = lazyStatement(() => db.select(columns).from(sessions).where(eq(sessions.tokenHash, sql.placeholder("hash"))).prepare());
  const get = (id: string): Session | null => db.select(columns).from(sessions).where(eq(sessions.id, id)).get() ?? null;
  return {
    async create(session) {
      db.insert(sessions).values(session).run();
      const { tokenHash: _, ...rest } = session;
      return rest;
    },
    async findByTokenHash(hash) {
      return byHash().get({ hash }) ?? null;
    },
    get: lift(get),
    async touch(id, lastSeenAt, idleExpiresAt) {
      // Skipped while another process holds the write lock: the session's next request slides it.
      writeUnlessLocked(handle.sqlite, () => db.update(sessions).set({ lastSeenAt, idleExpiresAt }).where(eq(sessions.id, id)).run());
    },
    async revoke(id, effects) {
      return immediate(handle, () => {
        const [gone] = db.delete(sessions).where(eq(sessions.id, id)).returning(columns).all();
        if (!gone) return null;
        if (effects) writeEffects(db, effects);
        return gone;
      });
    },
    async revokeAllForUser(userId, effects) {
      return immediate(handle, () => {
        const gone = db.delete(sessions).where(eq(sessions.userId, userId)).returning({ id: sessions.id }).all();
        if (gone.length > 0 && effects) writeEffects(db, effects);
        return gone.length;
      });
    },
    async list(f) {
      return keysetPage(sessionListQuery(db, f).all(), f.limit);
    },
    async pruneExpired(now, limit) {
      if (limit <= 0) return 0;
      const expired = or(lte(sessions.idleExpiresAt, now), lte(sessions.absoluteExpiresAt, now));
      const batch = db.select({ id: sessions.id }).from(sessions).where(expired).limit(limit);
      return db.delete(sessions).where(inArray(sessions.id, batch)).returning({ id: sessions.id }).all().length;
    },
  };
}
