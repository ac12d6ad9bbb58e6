import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { PgHandle, PgExecutor } from "../../db/pg";
import { signingKeys } from "../../db/schema-pg";
import { serializable } from "../../db/serializable.pg";
import { writeEffectsPg } from "../outbox/write.pg";
import { signingKeyRecord as toRecord, type SigningKeyPurpose, type SigningKeyRecord, type SigningKeyRepo } from "./repo";


const scope = (purpose: SigningKeyPurpose, productId: string | null) =>
  and(eq(signingKeys.purpose, purpose), productId === null ? isNull(signingKeys.productId) : eq(signingKeys.productId, productId));

async function findActive(tx: PgExecutor, purpose: SigningKeyPurpose, productId: string | null): Promise<SigningKeyRecord | null> {
  const [row] = await tx
    .select()
    .from(signingKeys)
    .where(and(scope(purpose, productId), eq(signingKeys.active, true)));
  return row ? toRecord(row) : null;
}

export function createSigningKeyRepoPg(handle: PgHandle): SigningKeyRepo {
  const { db } = handle;
  return {
    findActive: (purpose, productId) => findActive(db, purpose, productId),
    async list(purpose, productId) {
      // Newest first. SQLite breaks createdAt ties by insertion order; ids are UUIDv7 taken when the
      // record is made, so ascending id (in byte order) is the same order here.
      const rows = await db
        .select()
        .from(signingKeys)
        .where(scope(purpose, productId))
        .orderBy(desc(signingKeys.createdAt), sql`${signingKeys.id} COLLATE "C"`);
      return rows.map(toRecord);
    },
    async findByKid(kid) {
      const [row] = await db.select().from(signingKeys).where(eq(signingKeys.kid, kid));
      return row ? toRecord(row) : null;
    },
    async activate(next, { onlyIfNoneActive, effects }) {
      // SERIALIZABLE, not a row lock: when no key is active yet (every node's first start) there is
      // no row to lock, and nodes racing there would each insert an active key. PostgreSQL aborts all
      // but one of the transactions that read "no active key" and then inserted one; the retry reads
      // the winner, so every node ends up with the same key and (purpose, product) has exactly one
      // active key. Rotations racing each other conflict on the retired row the same way.
      return await serializable(db, async (tx) => {
        const current = await findActive(tx, next.purpose, next.productId);
        if (current && onlyIfNoneActive) return current;
        if (current && current.kid === next.kid) return current;
        if (current) {
          await tx.update(signingKeys).set({ active: false, retiredAt: next.createdAt }).where(eq(signingKeys.id, current.id));
        }
        // The same key material activated again (e.g. LICENSE_SIGNING_KEY set back): revive its row.
        const [existing] = await tx.select().from(signingKeys).where(eq(signingKeys.kid, next.kid));
        if (existing) {
          await tx.update(signingKeys).set({ active: true, retiredAt: null }).where(eq(signingKeys.id, existing.id));
          if (effects) await writeEffectsPg(tx, effects);
          return { ...toRecord(existing), active: true, retiredAt: null };
        }
        await tx.insert(signingKeys).values({
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
        if (effects) await writeEffectsPg(tx, effects);
        return { ...next, active: true };
      });
    },
  };
}
