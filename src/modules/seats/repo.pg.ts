import { and, asc, count, desc, eq, gt, gte, inArray, isNull, isNotNull, or, sql } from "drizzle-orm";
import type { PgExecutor, PgHandle } from "../../db/pg";
import { licenses, plans, seats } from "../../db/schema-pg";
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
/** Ids compare bytewise on SQLite; COLLATE "C" keeps PostgreSQL's order the same. */
const idC = sql`${seats.id} COLLATE "C"`;

async function readSeat(tx: PgExecutor, licenseId: string, seatId: string): Promise<Seat | null> {
  const [r] = await tx.select().from(seats).where(and(eq(seats.id, seatId), eq(seats.licenseId, licenseId)));
  return r ? toSeat(r) : null;
}

/** A license's seats, oldest first: one range of seats_license_created_idx (exported for the query-plan test). */
export const seatsOfLicenseQueryPg = (db: PgHandle["db"], licenseId: string, includeRemoved: boolean, page?: { limit: number; cursor?: Cursor | null }) => {
  const q = db
    .select()
    .from(seats)
    .where(and(includeRemoved ? eq(seats.licenseId, licenseId) : active(licenseId), page?.cursor ? afterCursorAsc(seats.createdAt, idC, page.cursor) : undefined))
    .orderBy(asc(seats.createdAt), asc(idC));
  return page ? q.limit(page.limit) : q;
};

/** A user's accepted seats (GET /portal/licenses), oldest acceptance first: one range of seats_user_idx (exported for the query-plan test). */
export const acceptedSeatsQueryPg = (db: PgHandle["db"], userId: string, page?: SeatsPage) => {
  const q = db
    .select()
    .from(seats)
    .where(
      and(
        eq(seats.userId, userId),
        isNull(seats.removedAt),
        isNotNull(seats.acceptedAt),
        // accepted_at >= t first, so the range of seats_user_idx starts at the cursor.
        page?.after ? and(gte(seats.acceptedAt, page.after.at), or(gt(seats.acceptedAt, page.after.at), sql`${idC} > ${page.after.id}`)) : undefined,
      ),
    )
    .orderBy(asc(seats.acceptedAt), asc(idC));
  return page ? q.limit(page.limit) : q;
};

/** GET /portal/licenses' owned part: one range of licenses_email_lower_idx (exported for the query-plan test). */
export const licensesOwnedQueryPg = (db: PgHandle["db"], email: string, page?: SeatsPage) => {
  const licenseIdC = sql`${licenses.id} COLLATE "C"`;
  const q = db
    .select()
    .from(licenses)
    .where(
      and(
        // The same expression as licenses_email_lower_idx; under "C", lower() folds ASCII only, as SQLite's does.
        sql`lower(${licenses.email} COLLATE "C") = lower(${email}::text COLLATE "C")`,
        page?.after ? afterCursor(licenses.createdAt, licenseIdC, { t: page.after.at.getTime(), id: page.after.id }) : undefined,
      ),
    )
    .orderBy(desc(licenses.createdAt), desc(licenseIdC));
  return page ? q.limit(page.limit) : q;
};

export function createSeatRepoPg(handle: PgHandle): SeatRepo {
  const { db } = handle;

  return {
    async lockLicense(licenseId) {
      // The license row locked for the unit of work: adds to one license (on any node) serialise
      // here, so the count of pending + accepted seats the verb reads next cannot be overtaken.
      const [row] = await db
        .select({ license: licenses, maxSeats: plans.maxSeats })
        .from(licenses)
        .innerJoin(plans, eq(plans.id, licenses.planId))
        .where(eq(licenses.id, licenseId))
        .for("update", { of: licenses });
      return row ? { license: { ...row.license } as License, maxSeats: row.maxSeats } : null;
    },
    async findByEmail(licenseId, email) {
      const [r] = await db.select().from(seats).where(and(eq(seats.licenseId, licenseId), eq(seats.email, email)));
      return r ? toSeat(r) : null;
    },
    async insertInvite(licenseId, email, invite) {
      const [inserted] = await db
        .insert(seats)
        .values({ id: newId(), licenseId, email, userId: null, acceptedAt: null, removedAt: null, createdAt: invite.at, ...inviteColumns(invite) })
        .returning();
      return toSeat(inserted!);
    },
    async renewInvite(seatId, invite) {
      const [renewed] = await db.update(seats).set({ ...inviteColumns(invite), userId: null, acceptedAt: null, removedAt: null }).where(eq(seats.id, seatId)).returning();
      return toSeat(renewed!);
    },
    async markRemoved(licenseId, seatId, at) {
      const [removed] = await db
        .update(seats)
        .set({ removedAt: at, inviteTokenHash: null, inviteExpiresAt: null, updatedAt: at })
        .where(and(eq(seats.id, seatId), active(licenseId)))
        .returning();
      return removed ? toSeat(removed) : null;
    },
    get: (licenseId, seatId) => readSeat(db, licenseId, seatId),
    async list(licenseId, opts) {
      const rows = await seatsOfLicenseQueryPg(db, licenseId, opts.includeRemoved ?? false, opts.page);
      return rows.map(toSeat);
    },
    async countActive(licenseIds) {
      const out = new Map<string, number>(licenseIds.map((id) => [id, 0]));
      if (licenseIds.length === 0) return out;
      const rows = await db
        .select({ licenseId: seats.licenseId, n: count() })
        .from(seats)
        .where(and(inArray(seats.licenseId, [...licenseIds]), isNull(seats.removedAt)))
        .groupBy(seats.licenseId);
      for (const r of rows) out.set(r.licenseId, r.n);
      return out;
    },
    async acceptedSeatOf(licenseId, userId) {
      const [r] = await db.select().from(seats).where(and(active(licenseId), eq(seats.userId, userId), isNotNull(seats.acceptedAt)));
      return r ? toSeat(r) : null;
    },
    async acceptedSeatsOf(userId, page) {
      const rows = await acceptedSeatsQueryPg(db, userId, page);
      return rows.map(toSeat);
    },
    async licensesOwnedBy(email, page) {
      const rows = await licensesOwnedQueryPg(db, email, page);
      return rows.map((r) => ({ ...r }));
    },
    async claimInvite(tokenHash, at) {
      return db.transaction(async (tx) => {
        // FOR UPDATE: of two concurrent claims the second waits, then finds the hash cleared.
        const [r] = await tx
          .select()
          .from(seats)
          .where(and(eq(seats.inviteTokenHash, tokenHash), isNull(seats.removedAt), isNull(seats.acceptedAt)))
          .for("update");
        if (!r) return null;
        const [cleared] = await tx
          .update(seats)
          .set({ inviteTokenHash: null, inviteExpiresAt: null, updatedAt: at })
          .where(and(eq(seats.id, r.id), eq(seats.inviteTokenHash, tokenHash)))
          .returning({ id: seats.id });
        return cleared ? toSeat(r) : null;
      });
    },
    async markAccepted(seatId, userId, at) {
      const [accepted] = await db
        .update(seats)
        .set({ userId, acceptedAt: at, inviteTokenHash: null, inviteExpiresAt: null, updatedAt: at })
        .where(and(eq(seats.id, seatId), isNull(seats.removedAt), isNull(seats.acceptedAt)))
        .returning();
      return accepted ? toSeat(accepted) : null;
    },
  };
}
