import { and, asc, count, eq, gt, inArray, lt, lte, sql } from "drizzle-orm";
import type { PgHandle, PgExecutor } from "../../db/pg";
import { floatingSessions, licenses } from "../../db/schema-pg";
import { writeEffectsPg } from "../outbox/write.pg";
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
    async checkout(input, decide, record, effects) {
      return db.transaction(async (tx): Promise<CheckoutOutcome> => {
        let expired: FloatingSession[] = [];
        const done = async (outcome: CheckoutOutcome, opened: boolean): Promise<CheckoutOutcome> => {
          if (effects) await writeEffectsPg(tx, effects({ outcome, opened, expired }));
          if (record && outcome.kind === "ok") await storeOutcomePg(tx, record(outcome));
          return outcome;
        };
        const ok = (outcome: CheckoutOk, opened: boolean) => done(outcome, opened);
        // Locks the license row: checkouts of one license (on any node) and a revoke serialise here,
        // so the count of live sessions below cannot be overtaken.
        const { max, timeoutMs } = decide(await readLicenseAccess(tx, { id: input.licenseId }, { forUpdate: true }));
        const { licenseId, identifier, at } = input;
        const expiresAt = new Date(at.getTime() + timeoutMs);
        // Expired sessions never count and are never revived (DECISIONS: Floating): drop them first,
        // so a checkout after expiry opens a new session with a new id.
        expired = await tx.delete(floatingSessions).where(and(eq(floatingSessions.licenseId, licenseId), lte(floatingSessions.expiresAt, at))).returning();
        const [refreshed] = await tx.update(floatingSessions).set({ heartbeatAt: at, expiresAt }).where(liveOf(licenseId, identifier, at)).returning();
        if (refreshed) {
          let session: FloatingSession = refreshed;
          if (input.label !== null && input.label !== refreshed.label) {
            await tx.update(floatingSessions).set({ label: input.label }).where(eq(floatingSessions.id, refreshed.id));
            session = { ...refreshed, label: input.label };
          }
          return ok({ kind: "ok", session, active: await countLive(tx, licenseId, at), max }, false);
        }
        const active = await countLive(tx, licenseId, at);
        if (max !== null && active >= max) return done({ kind: "limit", active, max }, false);
        const session: FloatingSession = { id: newId(), licenseId, identifier, label: input.label, createdAt: at, heartbeatAt: at, expiresAt };
        await tx.insert(floatingSessions).values(session);
        return ok({ kind: "ok", session, active: active + 1, max }, true);
      });
    },
    async heartbeat(licenseId, identifier, at, expiresAt) {
      return db.transaction(async (tx) => {
        const [session] = await tx.update(floatingSessions).set({ heartbeatAt: at, expiresAt }).where(liveOf(licenseId, identifier, at)).returning();
        return session ? { session, active: await countLive(tx, licenseId, at) } : null;
      });
    },
    async checkin(licenseId, identifier, at, effects) {
      return db.transaction(async (tx) => {
        const [session] = await tx.delete(floatingSessions).where(liveOf(licenseId, identifier, at)).returning();
        if (!session) return null;
        const released = { session, active: await countLive(tx, licenseId, at) };
        if (effects) await writeEffectsPg(tx, effects(released));
        return released;
      });
    },
    async expire(before, limit, effects) {
      if (limit <= 0) return [];
      return db.transaction(async (tx) => {
        // The condition is repeated on the DELETE: a session a heartbeat extended meanwhile stays.
        const dead = lt(floatingSessions.expiresAt, before);
        const batch = tx.select({ id: floatingSessions.id }).from(floatingSessions).where(dead).limit(limit);
        const gone = await tx.delete(floatingSessions).where(and(inArray(floatingSessions.id, batch), dead)).returning();
        if (effects && gone.length > 0) {
          // The licenses still exist (sessions cascade with them): their products, in the same transaction.
          const ids = [...new Set(gone.map((s) => s.licenseId))];
          const rows = await tx.select({ id: licenses.id, productId: licenses.productId }).from(licenses).where(inArray(licenses.id, ids));
          const products = new Map(rows.map((r) => [r.id, r.productId]));
          await writeEffectsPg(tx, effects(gone.map((session) => ({ session, productId: products.get(session.licenseId)! }))));
        }
        return gone;
      });
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
