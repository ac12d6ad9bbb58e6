import { and, asc, count, desc, eq, gt, gte, inArray, isNull, isNotNull, or, sql } from "drizzle-orm";
import { immediate, lift, type DbHandle } from "../../db/client";
import { licenses, plans, seats } from "../../db/schema";
import { newId } from "../../shared/ids";
import type { License } from "../licenses/repo";
import { afterCursor, afterCursorAsc, type Cursor } from "../../db/cursor";
import type { Seat, SeatInvite, SeatRepo, SeatsPage } from "./repo";

const toSeat = (r: typeof seats.$inferSelect): Seat => {
  const { inviteTokenHash: _hash, ...seat } = r;
  return seat;
};

const active = (licenseId: string) => and(eq(seats.licenseId, licenseId), isNull(seats.removedAt));
const inviteColumns = (i: SeatInvite) => ({ role: i.role, inviteTokenHash: i.tokenHash, inviteExpiresAt: i.inviteExpiresAt, invitedAt: i.at, updatedAt: i.at });

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
  const readSeat = (licenseId: string, seatId: string) => {
    const r = db.select().from(seats).where(and(eq(seats.id, seatId), eq(seats.licenseId, licenseId))).get();
    return r ? toSeat(r) : null;
  };

  return {
    async lockLicense(licenseId) {
      // The unit of work's BEGIN IMMEDIATE holds the write lock already: no other add (in this process
      // or another on the file) runs until it commits.
      const row = db
        .select({ license: licenses, maxSeats: plans.maxSeats })
        .from(licenses)
        .innerJoin(plans, eq(plans.id, licenses.planId))
        .where(eq(licenses.id, licenseId))
        .get();
      return row ? { license: { ...row.license } as License, maxSeats: row.maxSeats } : null;
    },
    async findByEmail(licenseId, email) {
      const r = db.select().from(seats).where(and(eq(seats.licenseId, licenseId), eq(seats.email, email))).get();
      return r ? toSeat(r) : null;
    },
    async insertInvite(licenseId, email, invite) {
      const [inserted] = db
        .insert(seats)
        .values({ id: newId(), licenseId, email, userId: null, acceptedAt: null, removedAt: null, createdAt: invite.at, ...inviteColumns(invite) })
        .returning()
        .all();
      return toSeat(inserted!);
    },
    async renewInvite(seatId, invite) {
      const [renewed] = db.update(seats).set({ ...inviteColumns(invite), userId: null, acceptedAt: null, removedAt: null }).where(eq(seats.id, seatId)).returning().all();
      return toSeat(renewed!);
    },
    async markRemoved(licenseId, seatId, at) {
      const [removed] = db
        .update(seats)
        .set({ removedAt: at, inviteTokenHash: null, inviteExpiresAt: null, updatedAt: at })
        .where(and(eq(seats.id, seatId), active(licenseId)))
        .returning()
        .all();
      return removed ? toSeat(removed) : null;
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
    async markAccepted(seatId, userId, at) {
      const [accepted] = db
        .update(seats)
        .set({ userId, acceptedAt: at, inviteTokenHash: null, inviteExpiresAt: null, updatedAt: at })
        .where(and(eq(seats.id, seatId), isNull(seats.removedAt), isNull(seats.acceptedAt)))
        .returning()
        .all();
      return accepted ? toSeat(accepted) : null;
    },
  };
}
