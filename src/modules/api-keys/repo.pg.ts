import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { autocommitWrite } from "../../db/serializable.pg";
import { apiKeys } from "../../db/schema-pg";
import type { Scope } from "../../shared/actor";
import type { ApiKeyRecord, ApiKeyRepo } from "./repo";

type Row = typeof apiKeys.$inferSelect;
const toRecord = (r: Row): ApiKeyRecord => ({ ...r, scopes: r.scopes as Scope[] });

export function createApiKeyRepoPg(handle: PgHandle): ApiKeyRepo {
  const { db } = handle;
  // Prepared (postgres.js keeps the parsed statement per connection): every admin request resolves
  // its key through this lookup and then touches it.
  const byHash = db.select().from(apiKeys).where(eq(apiKeys.keyHash, sql.placeholder("hash"))).prepare("api_key_by_hash");
  const touch = db
    .update(apiKeys)
    .set({ lastUsedAt: sql`${sql.placeholder("at")}::timestamptz` })
    .where(eq(apiKeys.id, sql.placeholder("id")))
    .prepare("api_key_touch");
  const findById = async (id: string) => {
    const [r] = await db.select().from(apiKeys).where(eq(apiKeys.id, id));
    return r ? toRecord(r) : null;
  };
  return {
    async create(record) {
      await db.insert(apiKeys).values(record);
      return record;
    },
    async findByHash(hash) {
      const [r] = await byHash.execute({ hash });
      return r ? toRecord(r) : null;
    },
    findById,
    async list() {
      // Newest first. SQLite breaks createdAt ties by insertion order; ids are UUIDv7 taken at
      // creation, so ascending id (in byte order) is the same order here.
      const rows = await db.select().from(apiKeys).orderBy(desc(apiKeys.createdAt), sql`${apiKeys.id} COLLATE "C"`);
      return rows.map(toRecord);
    },
    async revoke(id, at) {
      // A conditional write: of several nodes revoking at once, exactly one revokes (and its verb
      // audits); the others find it revoked and return it as it is.
      const [revoked] = await db
        .update(apiKeys)
        .set({ revokedAt: at })
        .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
        .returning();
      if (revoked) return { key: toRecord(revoked), revoked: true };
      const [current] = await db.select().from(apiKeys).where(eq(apiKeys.id, id));
      return current ? { key: toRecord(current), revoked: false } : null;
    },
    async touch(id, at) {
      await autocommitWrite(() => touch.execute({ id, at: at.toISOString() }), "skip");
    },
  };
}
