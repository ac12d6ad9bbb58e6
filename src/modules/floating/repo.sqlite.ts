import { and, asc, count, eq, gt, inArray, lt, lte } from "drizzle-orm";
import { immediate, type DbHandle } from "../../db/client";
import { floatingSessions, licenses } from "../../db/schema";
import { writeEffects } from "../outbox/write.sqlite";
import { createLicenseAccessReaders } from "../license-api/repo.sqlite";
import { storeOutcome } from "../idempotency/repo.sqlite";
import { newId } from "../../shared/ids";
import type { CheckoutOk, CheckoutOutcome, FloatingRepo, FloatingSession } from "./repo";

export function createFloatingRepo(handle: DbHandle): FloatingRepo {
  const { db } = handle;
  const access = createLicenseAccessReaders(handle);
  const live = (licenseId: string, at: Date) => and(eq(floatingSessions.licenseId, licenseId), gt(floatingSessions.expiresAt, at));
  const liveOf = (licenseId: string, identifier: string, at: Date) => and(live(licenseId, at), eq(floatingSessions.identifier, identifier));
  const countLive = (licenseId: string, at: Date) =>
    db.select({ n: count() }).from(floatingSessions).where(live(licenseId, at)).get()!.n;

  return {
    async checkout(input, decide, record, effects) {
      let expired: FloatingSession[] = [];
      const done = (outcome: CheckoutOutcome, opened: boolean): CheckoutOutcome => {
        if (effects) writeEffects(db, effects({ outcome, opened, expired }));
        if (record && outcome.kind === "ok") storeOutcome(handle, record(outcome));
        return outcome;
      };
      const ok = (outcome: CheckoutOk, opened: boolean) => done(outcome, opened);
      return immediate(handle, (): CheckoutOutcome => {
        const { max, timeoutMs } = decide(access.findById(input.licenseId));
        const { licenseId, identifier, at } = input;
        const expiresAt = new Date(at.getTime() + timeoutMs);
        // Expired sessions never count and are never revived (DECISIONS: Floating): drop them first,
        // so a checkout after expiry opens a new session with a new id.
        expired = db.delete(floatingSessions).where(and(eq(floatingSessions.licenseId, licenseId), lte(floatingSessions.expiresAt, at))).returning().all();
        const [refreshed] = db
          .update(floatingSessions)
          .set({ heartbeatAt: at, expiresAt })
          .where(liveOf(licenseId, identifier, at))
          .returning()
          .all();
        if (refreshed) {
          let session: FloatingSession = refreshed;
          if (input.label !== null && input.label !== refreshed.label) {
            db.update(floatingSessions).set({ label: input.label }).where(eq(floatingSessions.id, refreshed.id)).run();
            session = { ...refreshed, label: input.label };
          }
          return ok({ kind: "ok", session, active: countLive(licenseId, at), max }, false);
        }
        const active = countLive(licenseId, at);
        if (max !== null && active >= max) return done({ kind: "limit", active, max }, false);
        const session: FloatingSession = { id: newId(), licenseId, identifier, label: input.label, createdAt: at, heartbeatAt: at, expiresAt };
        db.insert(floatingSessions).values(session).run();
        return ok({ kind: "ok", session, active: active + 1, max }, true);
      });
    },
    async heartbeat(licenseId, identifier, at, expiresAt) {
      return immediate(handle, () => {
        const [session] = db.update(floatingSessions).set({ heartbeatAt: at, expiresAt }).where(liveOf(licenseId, identifier, at)).returning().all();
        return session ? { session, active: countLive(licenseId, at) } : null;
      });
    },
    async checkin(licenseId, identifier, at, effects) {
      return immediate(handle, () => {
        const [session] = db.delete(floatingSessions).where(liveOf(licenseId, identifier, at)).returning().all();
        if (!session) return null;
        const released = { session, active: countLive(licenseId, at) };
        if (effects) writeEffects(db, effects(released));
        return released;
      });
    },
    async expire(before, limit, effects) {
      if (limit <= 0) return [];
      return immediate(handle, () => {
        const batch = db.select({ id: floatingSessions.id }).from(floatingSessions).where(lt(floatingSessions.expiresAt, before)).limit(limit);
        const gone = db.delete(floatingSessions).where(inArray(floatingSessions.id, batch)).returning().all();
        if (effects && gone.length > 0) {
          // The licenses still exist (sessions cascade with them): their products, in the same transaction.
          const ids = [...new Set(gone.map((s) => s.licenseId))];
          const products = new Map(
            db.select({ id: licenses.id, productId: licenses.productId }).from(licenses).where(inArray(licenses.id, ids)).all().map((r) => [r.id, r.productId]),
          );
          writeEffects(db, effects(gone.map((session) => ({ session, productId: products.get(session.licenseId)! }))));
        }
        return gone;
      });
    },
    async listActive(licenseId, at) {
      return db.select().from(floatingSessions).where(live(licenseId, at)).orderBy(asc(floatingSessions.createdAt), asc(floatingSessions.id)).all();
    },
  };
}
