// UserRepo on both engines, written once against the query seam (db/dialect/query.ts).
import { and, desc, eq, isNotNull, sql, type SQL } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import { afterCursor, decodeCursor, keysetPage } from "../../db/cursor";
import { likeEscape } from "../../db/like";
import { asciiLower } from "../../shared/ascii";
import { newId } from "../../shared/ids";
import type { User, UserFilter, UserRepo } from "./repo";

/** GET /admin/users' one statement for a filter (exported for the query-plan test). */
export function userListQuery(d: QueryDialect, f: UserFilter) {
  const { users } = d.tables;
  const where: SQL[] = [];
  if (f.role === "admins") where.push(isNotNull(users.role));
  else if (f.role) where.push(eq(users.role, f.role));
  if (f.search) where.push(sql`${users.email} LIKE ${`%${likeEscape(asciiLower(f.search))}%`} ESCAPE '\\'`);
  if (f.cursor) where.push(afterCursor(users.createdAt, d.byteOrder(users.id), decodeCursor(f.cursor)));
  return d.db
    .select()
    .from(users)
    .where(where.length ? and(...where) : undefined)
    .orderBy(desc(users.createdAt), desc(d.byteOrder(users.id)))
    .limit(f.limit + 1);
}

export function createUserRepo(d: QueryDialect): UserRepo {
  const { db } = d;
  const { users } = d.tables;
  // Prepared: every signed-in request reads its user (the role is checked per request).
  const byId = d.prepared("user_by_id", () => db.select().from(users).where(eq(users.id, sql.placeholder("id"))));
  return {
    async ensure(email, at) {
      // One statement whichever request (or node) wins: the insert returns the new row, or the
      // update (a no-op that keeps the row) returns the existing one.
      const [row] = await db
        .insert(users)
        .values({ id: newId(), email, role: null, createdAt: at, lastSignInAt: null })
        .onConflictDoUpdate({ target: users.email, set: { email: sql`excluded.email` } })
        .returning();
      return row!;
    },
    async get(id) {
      return (await byId({ id }))[0] ?? null;
    },
    async findByEmail(email) {
      return (await db.select().from(users).where(eq(users.email, email)))[0] ?? null;
    },
    async list(f) {
      return keysetPage(await userListQuery(d, f), f.limit);
    },
    async lockAdmins() {
      const rows = await d.forUpdate(db.select({ id: users.id }).from(users).where(eq(users.role, "admin")).orderBy(d.byteOrder(users.id)));
      return rows.map((r) => r.id);
    },
    async lock(id) {
      return (await d.forUpdate(db.select().from(users).where(eq(users.id, id))))[0] ?? null;
    },
    async updateRole(id, role) {
      return (await db.update(users).set({ role }).where(eq(users.id, id)).returning())[0] ?? null;
    },
    async delete(id) {
      return (await db.delete(users).where(eq(users.id, id)).returning({ id: users.id })).length > 0;
    },
    async touchSignIn(id, at) {
      await d.bestEffortWrite(() => db.update(users).set({ lastSignInAt: at }).where(eq(users.id, id)));
    },
  };
}
