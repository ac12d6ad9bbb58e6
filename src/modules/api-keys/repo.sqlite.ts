import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { lift, lazyStatement, writeUnlessLocked, type DbHandle } from "../../db/client";
import { apiKeys } from "../../db/schema";
import type { Scope } from "../../shared/actor";
import type { ApiKeyRecord, ApiKeyRepo } from "./repo";

type Row = typeof apiKeys.$inferSelect;
const toRecord = (r: Row): ApiKeyRecord => ({ ...r, scopes: r.scopes as Scope[] });

export function createApiKeyRepo(handle: DbHandle): ApiKeyRepo {
  const { db } = handle;
  // Prepared: every admin request resolves its key through this lookup.
  const byHash = lazyStatement(() => db.select().from(apiKeys).where(eq(apiKeys.keyHash, sql.placeholder("hash"))).prepare());
  const findById = (id: string) => {
    const r = db.select().from(apiKeys).where(eq(apiKeys.id, id)).get();
    return r ? toRecord(r) : null;
  };
  return {
    async create(record) {
      db.insert(apiKeys).values(record).run();
      return record;
    },
    async findByHash(hash) {
      const r = byHash().get({ hash });
      return r ? toRecord(r) : null;
    },
    findById: lift(findById),
    async list() {
      return db.select().from(apiKeys).orderBy(desc(apiKeys.createdAt)).all().map(toRecord);
    },
    async revoke(id, at) {
      const [revoked] = db
        .update(apiKeys)
        .set({ revokedAt: at })
        .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
        .returning()
        .all();
      if (revoked) return { key: toRecord(revoked), revoked: true };
      const current = findById(id);
      return current ? { key: current, revoked: false } : null;
    },
    async touch(id, at) {
      // Skipped while another process holds the write lock: the key's next use notes it.
      writeUnlessLocked(handle.sqlite, () => db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, id)).run());
    },
  };
}

