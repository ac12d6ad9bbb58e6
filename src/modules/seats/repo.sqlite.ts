import { and, asc, count, desc, eq, gt, gte, inArray, isNull, isNotNull, or, sql } from "drizzle-orm";
import { immediate, lift, type DbHandle } from "../../db/client";
import { licenses, plans, seats } from "../../db/schema";
import { writeEffects } from "../outbox/write.sqlite";
import { newId } from "../../shared/ids";
import type { License } from "../licenses/repo";
import { afterCursor, afterCursorAsc, type Cursor } from "../../db/cursor";
import type { Seat, SeatAddKind, SeatAddOutcome, SeatRepo, SeatsPage } from "./repo";

const toSeat = (r: typeof seats.$inferSelect): Seat => {
  const { inviteTokenHash: _hash, ...seat } = r;
  return seat;
};

const active = (licenseId: string) => and(eq(seats.licenseId, licenseId), isNull(seats.removedAt));

/** A license's seats, oldest first: one range of seats_license_created_idx (exported for the query-plan test). */
export const seatsOfLicenseQuery = (db: DbHandle["db"], licenseId: string, includeRemoved: boolean, page?: { limit: number; cursor?: Cursor | null }) => {
  const q = db
    .select()
    .from(seats)
    .where(and(includeRemoved ? eq(seats.licenseId, licenseId) : active(licenseId), page?.cursor ? afterCursorAsc(seats.createdAt, seats.id, page.cursor) : undefined))
    .orderBy(asc(seats.createdAt), asc(seats.id));
  return page ? q.limit(page.limit) : q;
};

/** A user's accepted seats (GET /portal/licenses), oldest acceptance first: one range of seats_user_idx (exported for the query-plan test). */
export const acceptedSeatsQuery = (db: DbHandle["db"], userId: string, page?: SeatsPage) => {
  const q = db
    .select()
    .from(seats)
    .where(
      and(
        eq(seats.userId, userId),
        isNull(seats.removedAt),
        isNotNull(seats.acceptedAt),
        // accepted_at >= t first, so the range of seats_user_idx starts at the cursor.
        page?.after
          ? and(gte(seats.acceptedAt, page.after.at), or(gt(seats.acceptedAt, page.after.at), gt(seats.id, page.after.id)))
          : undefined,
      ),
    )
    .orderBy(asc(seats.acceptedAt), asc(seats.id));
  return page ? q.limit(page.limit) : q;
};

/** GET /portal/licenses' owned part: one range of licenses_email_lower_idx (exported for the query-plan test). */
export const licensesOwnedQuery = (db: DbHandle["db"], email: string, page?: SeatsPage) => {
  const q = db
    .select()
    .from(licenses)
    .where(
      and(
        // lower(email) matches the licenses_email_lower_idx expression index.
        sql`lower(${licenses.email}) = lower(${email})`,
        page?.after ? afterCursor(licenses.createdAt, licenses.id, { t: page.after.at.getTime(), id: page.after.id }) : undefined,
      ),
    )
    .orderBy(desc(licenses.createdAt), desc(licenses.id));
  return page ? q.limit(page.limit) : q;
};

export function createSeatRepo(handle: DbHandle): SeatRepo {
  const { db } = handle;
  const countActive = (licenseId: string) => db.select({ n: count() }).from(seats).where(active(licenseId)).get()!.n;
  const readSeat = (licenseId: string, seatId: string) => {
    const r = db.select().from(seats).where(and(eq(seats.id, seatId), eq(seats.licenseId, licenseId))).get();
    return r ? toSeat(r) : null;
  };

  return {
    async add(input, check, effects) {
      return immediate(handle, (): SeatAddOutcome => {
        const row = db
          .select({ license: licenses, maxSeats: plans.maxSeats })
          .from(licenses)
          .innerJoin(plans, eq(plans.id, licenses.planId))
          .where(eq(licenses.id, input.licenseId))
          .get();
        const current = row ? { license: { ...row.license } as License, maxSeats: row.maxSeats } : null;
        check(current);
        const { license, maxSeats } = current!;
        const { at } = input;
        const existing = db.select().from(seats).where(and(eq(seats.licenseId, input.licenseId), eq(seats.email, input.email))).get();
        const done = (kind: SeatAddKind, seat: Seat): SeatAddOutcome => {
          writeEffects(db, effects({ kind, seat, license }));
          return { kind, seat, license };
        };
        const invite = { role: input.role, inviteTokenHash: input.tokenHash, inviteExpiresAt: input.inviteExpiresAt, invitedAt: at, updatedAt: at };
        if (existing && existing.removedAt === null) {
          // An accepted seat whose user was deleted (unbound) is invited again: nobody could use it.
          if (existing.acceptedAt !== null && existing.userId !== null) return done("existing", toSeat(existing));
          const [rotated] = db.update(seats).set({ ...invite, acceptedAt: null, userId: null }).where(eq(seats.id, existing.id)).returning().all();
          return done("reinvited", toSeat(rotated!));
        }
        // A new or restored seat takes room: pending + accepted seats count (DECISIONS).
        const used = countActive(input.licenseId);
        if (maxSeats !== null && used >= maxSeats) return { kind: "limit", max: maxSeats, used };
        if (existing) {
          const [restored] = db
            .update(seats)
            .set({ ...invite, userId: null, acceptedAt: null, removedAt: null })
            .where(eq(seats.id, existing.id))
            .returning()
            .all();
          return done("restored", toSeat(restored!));
        }
        const [inserted] = db
          .insert(seats)
          .values({ id: newId(), licenseId: input.licenseId, email: input.email, userId: null, acceptedAt: null, removedAt: null, createdAt: at, ...invite })
          .returning()
          .all();
        return done("invited", toSeat(inserted!));
      });
    },
    async remove(licenseId, seatId, at, effects) {
      return immediate(handle, () => {
        const [removed] = db
          .update(seats)
          .set({ removedAt: at, inviteTokenHash: null, inviteExpiresAt: null, updatedAt: at })
          .where(and(eq(seats.id, seatId), active(licenseId)))
          .returning()
          .all();
        if (removed) {
          const seat = toSeat(removed);
          writeEffects(db, effects(seat));
          return { seat, changed: true };
        }
        const before = readSeat(licenseId, seatId);
        return before ? { seat: before, changed: false } : null;
      });
    },
    get: lift(readSeat),
    async list(licenseId, opts) {
      return seatsOfLicenseQuery(db, licenseId, opts.includeRemoved ?? false, opts.page)
        .all()
        .map(toSeat);
    },
    async countActive(licenseIds) {
      const out = new Map<string, number>(licenseIds.map((id) => [id, 0]));
      if (licenseIds.length === 0) return out;
      const rows = db
        .select({ licenseId: seats.licenseId, n: count() })
        .from(seats)
        .where(and(inArray(seats.licenseId, [...licenseIds]), isNull(seats.removedAt)))
        .groupBy(seats.licenseId)
        .all();
      for (const r of rows) out.set(r.licenseId, r.n);
      return out;
    },
    async acceptedSeatOf(licenseId, userId) {
      const r = db
        .select()
        .from(seats)
        .where(and(active(licenseId), eq(seats.userId, userId), isNotNull(seats.acceptedAt)))
        .get();
      return r ? toSeat(r) : null;
    },
    async acceptedSeatsOf(userId, page) {
      return acceptedSeatsQuery(db, userId, page).all().map(toSeat);
    },
    async licensesOwnedBy(email, page) {
      return licensesOwnedQuery(db, email, page)
        .all()
        .map((r) => ({ ...r }));
    },
    async claimInvite(tokenHash, at) {
      return immediate(handle, () => {
        const r = db
          .select()
          .from(seats)
          .where(and(eq(seats.inviteTokenHash, tokenHash), isNull(seats.removedAt), isNull(seats.acceptedAt)))
          .get();
        if (!r) return null;
        db.update(seats).set({ inviteTokenHash: null, inviteExpiresAt: null, updatedAt: at }).where(eq(seats.id, r.id)).run();
        return toSeat(r);
      });
    },
    async accept(seatId, userId, at, effects) {
      return immediate(handle, () => {
        const [accepted] = db
          .update(seats)
          .set({ userId, acceptedAt: at, inviteTokenHash: null, inviteExpiresAt: null, updatedAt: at })
          .where(and(eq(seats.id, seatId), isNull(seats.removedAt), isNull(seats.acceptedAt)))
          .returning()
          .all();
        if (!accepted) return null;
        const seat = toSeat(accepted);
        writeEffects(db, effects(seat));
        return seat;
      });
    },
  };
}
