// SeatRepo on both engines, written once against the query seam (db/dialect/query.ts).
import { and, asc, count, desc, eq, gt, gte, inArray, isNull, isNotNull, or, sql } from "drizzle-orm";
import type { QueryDialect, Tables } from "../../db/dialect/query";
import { afterCursor, afterCursorAsc, type Cursor } from "../../db/cursor";
import { asciiLower } from "../../shared/ascii";
import { newId } from "../../shared/ids";
import type { License } from "../licenses/repo";
import type { Seat, SeatInvite, SeatRepo, SeatsPage } from "./repo";

const toSeat = (r: Tables["seats"]["$inferSelect"]): Seat => {
  const { inviteTokenHash: _hash, ...seat } = r;
  return seat;
};

const activeOf = (seats: Tables["seats"], licenseId: string) => and(eq(seats.licenseId, licenseId), isNull(seats.removedAt));
const inviteColumns = (i: SeatInvite) => ({ role: i.role, inviteTokenHash: i.tokenHash, inviteExpiresAt: i.inviteExpiresAt, invitedAt: i.at, updatedAt: i.at });

/** A license's seats, oldest first: one range of seats_license_created_idx (exported for the query-plan test). */
export function seatsOfLicenseQuery(d: QueryDialect, licenseId: string, includeRemoved: boolean, page?: { limit: number; cursor?: Cursor | null }) {
  const { seats } = d.tables;
  const q = d.db
    .select()
    .from(seats)
    .where(
      and(
        includeRemoved ? eq(seats.licenseId, licenseId) : activeOf(seats, licenseId),
        page?.cursor ? afterCursorAsc(seats.createdAt, d.byteOrder(seats.id), page.cursor) : undefined,
      ),
    )
    .orderBy(asc(seats.createdAt), asc(d.byteOrder(seats.id)));
  return page ? q.limit(page.limit) : q;
}

/** A user's accepted seats (GET /portal/licenses), oldest acceptance first: one range of seats_user_idx (exported for the query-plan test). */
export function acceptedSeatsQuery(d: QueryDialect, userId: string, page?: SeatsPage) {
  const { seats } = d.tables;
  const q = d.db
    .select()
    .from(seats)
    .where(
      and(
        eq(seats.userId, userId),
        isNull(seats.removedAt),
        isNotNull(seats.acceptedAt),
        // accepted_at >= t first, so the range of seats_user_idx starts at the cursor.
        page?.after
          ? and(gte(seats.acceptedAt, page.after.at), or(gt(seats.acceptedAt, page.after.at), sql`${d.byteOrder(seats.id)} > ${page.after.id}`))
          : undefined,
      ),
    )
    .orderBy(asc(seats.acceptedAt), asc(d.byteOrder(seats.id)));
  return page ? q.limit(page.limit) : q;
}

/** GET /portal/licenses' owned part: one range of licenses_email_lower_idx (exported for the query-plan test). */
export function licensesOwnedQuery(d: QueryDialect, email: string, page?: SeatsPage) {
  const { licenses } = d.tables;
  const q = d.db
    .select()
    .from(licenses)
    .where(
      and(
        // The expression of licenses_email_lower_idx: lower(email) on SQLite, lower(email COLLATE "C")
        // on PostgreSQL, where under "C" lower() folds ASCII only, as SQLite's does; the address it is
        // compared with is folded the same way here (asciiLower) rather than by either engine.
        sql`lower(${d.byteOrder(licenses.email)}) = ${asciiLower(email)}`,
        page?.after ? afterCursor(licenses.createdAt, d.byteOrder(licenses.id), { t: page.after.at.getTime(), id: page.after.id }) : undefined,
      ),
    )
    .orderBy(desc(licenses.createdAt), desc(d.byteOrder(licenses.id)));
  return page ? q.limit(page.limit) : q;
}

export function createSeatRepo(d: QueryDialect): SeatRepo {
  const { db } = d;
  const { licenses, plans, seats } = d.tables;

  return {
    async lockLicense(licenseId) {
      // The license row locked for the unit of work (PostgreSQL; SQLite's unit, BEGIN IMMEDIATE,
      // holds the write lock already): adds to one license, on any node or process, serialise here,
      // so the count of pending + accepted seats the verb reads next cannot be overtaken. The plan is
      // read on its own, unlocked: a join under FOR UPDATE would lock the plan's row too (the seam's
      // forUpdate names no table), and with it the adds to every license of the plan.
      const license = (await d.forUpdate(db.select().from(licenses).where(eq(licenses.id, licenseId)), "update"))[0];
      if (!license) return null;
      const plan = (await db.select({ maxSeats: plans.maxSeats }).from(plans).where(eq(plans.id, license.planId)))[0];
      return plan ? { license: { ...license } as License, maxSeats: plan.maxSeats } : null;
    },
    async findByEmail(licenseId, email) {
      const r = (await db.select().from(seats).where(and(eq(seats.licenseId, licenseId), eq(seats.email, email))))[0];
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
        .where(and(eq(seats.id, seatId), activeOf(seats, licenseId)))
        .returning();
      return removed ? toSeat(removed) : null;
    },
    async get(licenseId, seatId) {
      const r = (await db.select().from(seats).where(and(eq(seats.id, seatId), eq(seats.licenseId, licenseId))))[0];
      return r ? toSeat(r) : null;
    },
    async list(licenseId, opts) {
      return (await seatsOfLicenseQuery(d, licenseId, opts.includeRemoved ?? false, opts.page)).map(toSeat);
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
      const r = (await db.select().from(seats).where(and(activeOf(seats, licenseId), eq(seats.userId, userId), isNotNull(seats.acceptedAt))))[0];
      return r ? toSeat(r) : null;
    },
    async acceptedSeatsOf(userId, page) {
      return (await acceptedSeatsQuery(d, userId, page)).map(toSeat);
    },
    async licensesOwnedBy(email, page) {
      return (await licensesOwnedQuery(d, email, page)).map((r) => ({ ...r }));
    },
    async claimInvite(tokenHash, at) {
      // The seat as it was (its invite expiry: the verb tells an expired token by it), then the token
      // cleared. In the verb's unit (acceptInvite) the row stays locked until it ends: of two
      // concurrent claims the second waits, then finds the hash cleared. The update checks the hash
      // again, so the claim is one-shot outside a unit as well: of two claims that both read the
      // row, only the first update finds the hash.
      const r = (
        await d.forUpdate(
          db.select().from(seats).where(and(eq(seats.inviteTokenHash, tokenHash), isNull(seats.removedAt), isNull(seats.acceptedAt))),
          "update",
        )
      )[0];
      if (!r) return null;
      const cleared = await db
        .update(seats)
        .set({ inviteTokenHash: null, inviteExpiresAt: null, updatedAt: at })
        .where(and(eq(seats.id, r.id), eq(seats.inviteTokenHash, tokenHash), isNull(seats.removedAt), isNull(seats.acceptedAt)))
        .returning({ id: seats.id });
      return cleared.length > 0 ? toSeat(r) : null;
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
