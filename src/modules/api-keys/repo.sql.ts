// ApiKeyRepo on both engines, written once against the query seam (db/dialect/query.ts).
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import type { Scope } from "../../shared/actor";
import type { ApiKeyRecord, ApiKeyRepo } from "./repo";

type Row = QueryDialect["tables"]["apiKeys"]["$inferSelect"];
const toRecord = (r: Row): ApiKeyRecord => ({ ...r, scopes: r.scopes as Scope[] });

export function createApiKeyRepo(d: QueryDialect): ApiKeyRepo {
  const { db } = d;
  const { apiKeys } = d.tables;
  // Prepared: every admin request resolves its key through this lookup.
  const byHash = d.prepared("api_key_by_hash", () => db.select().from(apiKeys).where(eq(apiKeys.keyHash, sql.placeholder("hash"))));
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
      const [r] = await byHash({ hash });
      return r ? toRecord(r) : null;
    },
    findById,
    async list() {
      // Newest first; ids are UUIDv7 taken at creation, so a tie on createdAt is broken in creation order.
      return (await db.select().from(apiKeys).orderBy(desc(apiKeys.createdAt), d.byteOrder(apiKeys.id))).map(toRecord);
    },
    async revoke(id, at) {
      // A conditional write: of several requests (or nodes) revoking at once, exactly one revokes (and
      // its verb audits); the others find it revoked and return it as it is.
      const [revoked] = await db
        .update(apiKeys)
        .set({ revokedAt: at })
        .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
        .returning();
      if (revoked) return { key: toRecord(revoked), revoked: true };
      const current = await findById(id);
      return current ? { key: current, revoked: false } : null;
    },
    async touch(id, at) {
      // Best effort: while another writer holds the file or the row, the key's next use notes it.
      await d.bestEffortWrite(() => db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, id)));
    },
  };
}
