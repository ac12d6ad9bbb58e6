import { and, desc, eq, isNull } from "drizzle-orm";
import { lift, immediate, type DbHandle } from "../../db/client";
import { signingKeys } from "../../db/schema";
import { writeEffects } from "../outbox/write.sqlite";
import { signingKeyRecord as toRecord, type SigningKeyPurpose, type SigningKeyRepo } from "./repo";


export function createSigningKeyRepo(handle: DbHandle): SigningKeyRepo {
  const { db } = handle;
  const scope = (purpose: SigningKeyPurpose, productId: string | null) =>
    and(eq(signingKeys.purpose, purpose), productId === null ? isNull(signingKeys.productId) : eq(signingKeys.productId, productId));

  const findActive = (purpose: SigningKeyPurpose, productId: string | null) => {
    const row = db.select().from(signingKeys).where(and(scope(purpose, productId), eq(signingKeys.active, true))).get();
    return row ? toRecord(row) : null;
  };

  return {
    findActive: lift(findActive),
    async list(purpose, productId) {
      return db.select().from(signingKeys).where(scope(purpose, productId)).orderBy(desc(signingKeys.createdAt)).all().map(toRecord);
    },
    async findByKid(kid) {
      const row = db.select().from(signingKeys).where(eq(signingKeys.kid, kid)).get();
      return row ? toRecord(row) : null;
    },
    async activate(next, { onlyIfNoneActive, effects }) {
      return immediate(handle, () => {
        const current = findActive(next.purpose, next.productId);
        if (current && onlyIfNoneActive) return current;
        if (current && current.kid === next.kid) return current;
        if (current) {
          db.update(signingKeys)
            .set({ active: false, retiredAt: next.createdAt })
            .where(eq(signingKeys.id, current.id))
            .run();
        }
        // The same key material activated again (e.g. LICENSE_SIGNING_KEY set back): revive its row.
        const existing = db.select().from(signingKeys).where(eq(signingKeys.kid, next.kid)).get();
        if (existing) {
          db.update(signingKeys).set({ active: true, retiredAt: null }).where(eq(signingKeys.id, existing.id)).run();
          if (effects) writeEffects(db, effects);
          return { ...toRecord(existing), active: true, retiredAt: null };
        }
        db.insert(signingKeys)
          .values({
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
          })
          .run();
        if (effects) writeEffects(db, effects);
        return { ...next, active: true };
      });
    },
  };
}
