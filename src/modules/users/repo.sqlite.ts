import { and, desc, eq, isNotNull, ne, sql, type SQL } from "drizzle-orm";
import { lastAdmin } from "./domain";
import { immediate, lazyStatement, lift, type DbHandle } from "../../db/client";
import { users } from "../../db/schema";
import { afterCursor, decodeCursor, keysetPage } from "../../db/cursor";
import { newId } from "../../shared/ids";
import { likeEscape } from "../../db/like";
import { asciiLower } from "../../shared/ascii";
import { writeEffects } from "../outbox/write.sqlite";
import type { User, UserFilter, UserRepo } from "./repo";

/** GET /admin/users' one statement for a filter (exported for the query-plan test). */
export function userListQuery(db: DbHandle["db"], f: UserFilter) {
  const where: SQL[] = [];
  if (f.role === "admins") where.push(isNotNull(users.role));
  else if (f.role) where.push(eq(users.role, f.role));
  if (f.search) where.push(sql`${users.email} LIKE ${`%${likeEscape(asciiLower(f.search))}%`} ESCAPE '\\'`);
  if (f.cursor) where.push(afterCursor(users.createdAt, users.id, decodeCursor(f.cursor)));
  return db
    .select()
    .from(users)
    .where(where.length ? and(...where) : undefined)
    .orderBy(desc(users.createdAt), desc(users.id))
    .limit(f.limit + 1);
}

export function createUserRepo(handle: DbHandle): UserRepo {
  const { db } = handle;
  // Prepared: every signed-in request reads its user (the role is checked per request).
  const byId = lazyStatement(() => db.select().from(users).where(eq(users.id, sql.placeholder("id"))).prepare());
  const get = (id: string): User | null => byId().get({ id }) ?? null;
  const findByEmail = (email: string): User | null => db.select().from(users).where(eq(users.email, email)).get() ?? null;
  // Inside immediate(): the write lock is held, so no other change slips in between.
  const assertOtherAdmin = (id: string) => {
    const other = db.select({ id: users.id }).from(users).where(and(eq(users.role, "admin"), ne(users.id, id))).limit(1).get();
    if (!other) throw lastAdmin();
  };
  return {
    async ensure(email, at) {
      return immediate(handle, () => {
        db.insert(users).values({ id: newId(), email, role: null, createdAt: at, lastSignInAt: null }).onConflictDoNothing({ target: users.email }).run();
        return findByEmail(email)!;
      });
    },
    get: lift(get),
    findByEmail: lift(findByEmail),
    async list(f) {
      return keysetPage(userListQuery(db, f).all(), f.limit);
    },
    async setRole(id, role, effects, opts = {}) {
      return immediate(handle, () => {
        const current = get(id);
        if (!current) return null;
        if (current.role === role) return current;
        if (opts.keepAnAdmin && current.role === "admin") assertOtherAdmin(id);
        db.update(users).set({ role }).where(eq(users.id, id)).run();
        writeEffects(db, effects);
        return get(id);
      });
    },
    async remove(id, effects, opts = {}) {
      return immediate(handle, () => {
        if (opts.keepAnAdmin && get(id)?.role === "admin") assertOtherAdmin(id);
        const gone = db.delete(users).where(eq(users.id, id)).returning({ id: users.id }).all();
        if (gone.length === 0) return false;
        writeEffects(db, effects);
        return true;
      });
    },
    async touchSignIn(id, at) {
      db.update(users).set({ lastSignInAt: at }).where(eq(users.id, id)).run();
    },
  };
}
