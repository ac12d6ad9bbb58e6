import { and, desc, eq, isNotNull, ne, or, sql, type SQL } from "drizzle-orm";
import { lastAdmin } from "./domain";
import type { PgDb, PgExecutor, PgHandle } from "../../db/pg";
import { autocommitWrite } from "../../db/serializable.pg";
import { users } from "../../db/schema-pg";
import { afterCursor, decodeCursor, keysetPage } from "../../db/cursor";
import { likeEscape } from "../../db/like";
import { asciiLower } from "../../shared/ascii";
import { newId } from "../../shared/ids";
import { writeEffectsPg } from "../outbox/write.pg";
import type { User, UserFilter, UserRepo } from "./repo";

const idBytes = sql`${users.id} COLLATE "C"`;

/**
 * Locks every admin row: concurrent demotions and removals of admins take turns, and each sees the
 * others' outcome (a row demoted meanwhile no longer matches when the lock is granted).
 */
const lockAdmins = (tx: PgExecutor) =>
  (tx as PgDb).select({ id: users.id }).from(users).where(eq(users.role, "admin")).orderBy(sql`${users.id} COLLATE "C"`).for("update");

async function assertOtherAdmin(tx: PgExecutor, id: string): Promise<void> {
  const [other] = await tx.select({ id: users.id }).from(users).where(and(eq(users.role, "admin"), ne(users.id, id))).limit(1);
  if (!other) throw lastAdmin();
}

/** GET /admin/users' one statement for a filter (exported for the query-plan test). */
export function userListQueryPg(db: PgHandle["db"], f: UserFilter) {
  const where: SQL[] = [];
  if (f.role === "admins") where.push(isNotNull(users.role));
  else if (f.role) where.push(eq(users.role, f.role));
  if (f.search) where.push(sql`${users.email} LIKE ${`%${likeEscape(asciiLower(f.search))}%`} ESCAPE '\\'`);
  if (f.cursor) where.push(afterCursor(users.createdAt, idBytes, decodeCursor(f.cursor)));
  return db
    .select()
    .from(users)
    .where(where.length ? and(...where) : undefined)
    .orderBy(desc(users.createdAt), sql`${idBytes} DESC`)
    .limit(f.limit + 1);
}

export function createUserRepoPg(handle: PgHandle): UserRepo {
  const { db } = handle;
  // Prepared: every signed-in request reads its user (the role is checked per request).
  const byId = db.select().from(users).where(eq(users.id, sql.placeholder("id"))).prepare("user_by_id");
  const get = async (id: string): Promise<User | null> => (await byId.execute({ id }))[0] ?? null;
  const findByEmail = async (email: string): Promise<User | null> => (await db.select().from(users).where(eq(users.email, email)))[0] ?? null;
  return {
    async ensure(email, at) {
      // One statement whichever node wins: the insert returns the new row, or the update (a no-op
      // that keeps the row) returns the existing one.
      const [row] = await db
        .insert(users)
        .values({ id: newId(), email, role: null, createdAt: at, lastSignInAt: null })
        .onConflictDoUpdate({ target: users.email, set: { email: sql`excluded.email` } })
        .returning();
      return row!;
    },
    get,
    findByEmail,
    async list(f) {
      return keysetPage(await userListQueryPg(db, f), f.limit);
    },
    async setRole(id, role, effects, opts = {}) {
      return await db.transaction(async (tx) => {
        if (opts.keepAnAdmin) await lockAdmins(tx);
        const [current] = await tx.select().from(users).where(eq(users.id, id)).for("update");
        if (!current) return null;
        if (current.role === role) return current;
        if (opts.keepAnAdmin && current.role === "admin") await assertOtherAdmin(tx, id);
        const [updated] = await tx.update(users).set({ role }).where(eq(users.id, id)).returning();
        await writeEffectsPg(tx, effects);
        return updated!;
      });
    },
    async remove(id, effects, opts = {}) {
      return await db.transaction(async (tx) => {
        if (opts.keepAnAdmin) {
          await lockAdmins(tx);
          const [current] = await tx.select({ role: users.role }).from(users).where(eq(users.id, id));
          if (current?.role === "admin") await assertOtherAdmin(tx, id);
        }
        const gone = await tx.delete(users).where(eq(users.id, id)).returning({ id: users.id });
        if (gone.length === 0) return false;
        await writeEffectsPg(tx, effects);
        return true;
      });
    },
    async touchSignIn(id, at) {
      await autocommitWrite(() => db.update(users).set({ lastSignInAt: at }).where(eq(users.id, id)), "skip");
    },
  };
}
