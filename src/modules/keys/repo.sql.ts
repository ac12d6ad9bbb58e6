// SigningKeyRepo on both engines, written once against the query seam (db/dialect/query.ts).
import { and, desc, eq, isNull } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import { signingKeyRecord as toRecord, type SigningKeyPurpose, type SigningKeyRepo } from "./repo";

export function createSigningKeyRepo(d: QueryDialect): SigningKeyRepo {
  const { db } = d;
  const { signingKeys } = d.tables;
  const scope = (purpose: SigningKeyPurpose, productId: string | null) =>
    and(eq(signingKeys.purpose, purpose), productId === null ? isNull(signingKeys.productId) : eq(signingKeys.productId, productId));
  return {
    async findActive(purpose, productId) {
      const [row] = await db.select().from(signingKeys).where(and(scope(purpose, productId), eq(signingKeys.active, true)));
      return row ? toRecord(row) : null;
    },
    async list(purpose, productId) {
      // Newest first; ids are UUIDv7 taken when the record is made, so a tie on createdAt is broken in creation order.
      return (await db.select().from(signingKeys).where(scope(purpose, productId)).orderBy(desc(signingKeys.createdAt), d.byteOrder(signingKeys.id))).map(toRecord);
    },
    async findByKid(kid) {
      const [row] = await db.select().from(signingKeys).where(eq(signingKeys.kid, kid));
      return row ? toRecord(row) : null;
    },
    async lockScope(purpose, productId) {
      await d.lockKey(`signing_keys:${purpose}:${productId ?? ""}`);
    },
    async retire(id, at) {
      await db.update(signingKeys).set({ active: false, retiredAt: at }).where(eq(signingKeys.id, id));
    },
    async revive(id) {
      await db.update(signingKeys).set({ active: true, retiredAt: null }).where(eq(signingKeys.id, id));
    },
    async insert(next) {
      await db.insert(signingKeys).values({
        id: next.id,
        kid: next.kid,
        purpose: next.purpose,
        productId: next.productId,
        publicKey: next.publicKeyHex,
        privateKeyEncrypted: next.privateKeyEncrypted,
        keyNum: next.keyNumHex,
        active: true,
        createdAt: next.createdAt,
        retiredAt: null,
      });
    },
  };
}
