import { and, asc, count, eq, gt, lt, lte, sql } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { floatingSessions } from "../../db/schema-pg";
import type { PgExecutor } from "../audit/write.pg";
import { readLicenseAccess } from "../license-api/repo.pg";
import { storeOutcomePg } from "../idempotency/repo.pg";
import { newId } from "../../shared/ids";
import type { CheckoutOk, CheckoutOutcome, FloatingRepo, FloatingSession } from "./repo";

const live = (licenseId: string, at: Date) => and(eq(floatingSessions.licenseId, licenseId), gt(floatingSessions.expiresAt, at));
const liveOf = (licenseId: string, identifier: string, at: Date) => and(live(licenseId, at), eq(floatingSessions.identifier, identifier));

async function countLive(tx: PgExecutor, licenseId: string, at: Date): Promise<number> {
  const [counted] = await tx.select({ n: count() }).from(floatingSessions).where(live(licenseId, at));
  return counted!.n;
}

export function createFloatingRepoPg(handle: PgHandle): FloatingRepo {
  const { db } = handle;

  return {
    async checkout(input, decide, record) {
      return db.transaction(async (tx): Promise<CheckoutOutcome> => {
        const ok = async (outcome: CheckoutOk): Promise<CheckoutOutcome> => {
          if (record) await storeOutcomePg(tx, record(outcome));
          return outcome;
        };
        // Locks the license row: checkouts of one license (on any node) and a revoke serialise here,
        // so the count of live sessions below cannot be overtaken.
        const { max, timeoutMs } = decide(await readLicenseAccess(tx, { id: input.licenseId }, { forUpdate: true }));
        const { licenseId, identifier, at } = input;
        const expiresAt = new Date(at.getTime() + timeoutMs);
        // Expired sessions never count and are never revived (DECISIONS: Floating): drop them first,
        // so a checkout after expiry opens a new session with a new id.
        await tx.delete(floatingSessions).where(and(eq(floatingSessions.licenseId, licenseId), lte(floatingSessions.expiresAt, at)));
        const [refreshed] = await tx.update(floatingSessions).set({ heartbeatAt: at, expiresAt }).where(liveOf(licenseId, identifier, at)).returning();
        if (refreshed) {
          let session: FloatingSession = refreshed;
          if (input.label !== null && input.label !== refreshed.label) {
            await tx.update(floatingSessions).set({ label: input.label }).where(eq(floatingSessions.id, refreshed.id));
            session = { ...refreshed, label: input.label };
          }
          return ok({ kind: "ok", session, active: await countLive(tx, licenseId, at), max });
        }
        const active = await countLive(tx, licenseId, at);
        if (max !== null && active >= max) return { kind: "limit", active, max };
        const session: FloatingSession = { id: newId(), licenseId, identifier, label: input.label, createdAt: at, heartbeatAt: at, expiresAt };
        await tx.insert(floatingSessions).values(session);
        return ok({ kind: "ok", session, active: active + 1, max });
      });
    },
    async heartbeat(licenseId, identifier, at, expiresAt) {
      return db.transaction(async (tx) => {
        const [session] = await tx.update(floatingSessions).set({ heartbeatAt: at, expiresAt }).where(liveOf(licenseId, identifier, at)).returning();
        return session ? { session, active: await countLive(tx, licenseId, at) } : null;
      });
    },
    async checkin(licenseId, identifier, at) {
      return db.transaction(async (tx) => {
        const [session] = await tx.delete(floatingSessions).where(liveOf(licenseId, identifier, at)).returning();
        return session ? { session, active: await countLive(tx, licenseId, at) } : null;
      });
    },
    async expire(before) {
      return db.delete(floatingSessions).where(lt(floatingSessions.expiresAt, before)).returning();
    },
    async listActive(licenseId, at) {
      return db
        .select()
        .from(floatingSessions)
        .where(live(licenseId, at))
        .orderBy(asc(floatingSessions.createdAt), sql`${floatingSessions.id} COLLATE "C"`);
    },
  };
}
