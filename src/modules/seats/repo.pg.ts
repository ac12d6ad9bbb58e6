import { and, asc, count, desc, eq, gt, gte, inArray, isNull, isNotNull, or, sql } from "drizzle-orm";
import type { PgExecutor, PgHandle } from "../../db/pg";
import { licenses, plans, seats } from "../../db/schema-pg";
import { writeEffectsPg } from "../outbox/write.pg";
import { newId } from "../../shared/ids";
import type { License } from "../licenses/repo";
import { afterCursor, afterCursorAsc, type Cursor } from "../../db/cursor";
import type { Seat, SeatAddKind, SeatAddOutcome, SeatRepo, SeatsPage } from "./repo";

const toSeat = (r: typeof seats.$inferSelect): Seat => {
  const { inviteTokenHash: _hash, ...seat } = r;
  return seat;
};

const active = (licenseId: string) => and(eq(seats.licenseId, licenseId), isNull(seats.removedAt));
/** Ids compare bytewise on SQLite; COLLATE "C" keeps PostgreSQL's order the same. */
const idC = sql`${seats.id} COLLATE "C"`;

async function countActive(tx: PgExecutor, licenseId: string): Promise<number> {
  const [r] = await tx.select({ n: count() }).from(seats).where(active(licenseId));
  return r!.n;
}

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
    async add(input, check, effects) {
      return db.transaction(async (tx): Promise<SeatAddOutcome> => {
        // Locks the license row: adds to one license (on any node) serialise here, so the count of
        // pending + accepted seats below cannot be overtaken by another add.
        const [row] = await tx
          .select({ license: licenses, maxSeats: plans.maxSeats })
          .from(licenses)
          .innerJoin(plans, eq(plans.id, licenses.planId))
          .where(eq(licenses.id, input.licenseId))
          .for("update", { of: licenses });
        const current = row ? { license: { ...row.license } as License, maxSeats: row.maxSeats } : null;
        check(current);
        const { license, maxSeats } = current!;
        const { at } = input;
        const [existing] = await tx.select().from(seats).where(and(eq(seats.licenseId, input.licenseId), eq(seats.email, input.email)));
        const done = async (kind: SeatAddKind, seat: Seat): Promise<SeatAddOutcome> => {
          await writeEffectsPg(tx, effects({ kind, seat, license }));
          return { kind, seat, license };
        };
        const invite = { role: input.role, inviteTokenHash: input.tokenHash, inviteExpiresAt: input.inviteExpiresAt, invitedAt: at, updatedAt: at };
        if (existing && existing.removedAt === null) {
          // An accepted seat whose user was deleted (unbound) is invited again: nobody could use it.
          if (existing.acceptedAt !== null && existing.userId !== null) return done("existing", toSeat(existing));
          const [rotated] = await tx.update(seats).set({ ...invite, acceptedAt: null, userId: null }).where(eq(seats.id, existing.id)).returning();
          return done("reinvited", toSeat(rotated!));
        }
        // A new or restored seat takes room: pending + accepted seats count (DECISIONS).
        const used = await countActive(tx, input.licenseId);
        if (maxSeats !== null && used >= maxSeats) return { kind: "limit", max: maxSeats, used };
        if (existing) {
          const [restored] = await tx
            .update(seats)
            .set({ ...invite, userId: null, acceptedAt: null, removedAt: null })
            .where(eq(seats.id, existing.id))
            .returning();
          return done("restored", toSeat(restored!));
        }
        const [inserted] = await tx
          .insert(seats)
          .values({ id: newId(), licenseId: input.licenseId, email: input.email, userId: null, acceptedAt: null, removedAt: null, createdAt: at, ...invite })
          .returning();
        return done("invited", toSeat(inserted!));
      });
    },
    async remove(licenseId, seatId, at, effects) {
      return db.transaction(async (tx) => {
        const [removed] = await tx
          .update(seats)
          .set({ removedAt: at, inviteTokenHash: null, inviteExpiresAt: null, updatedAt: at })
          .where(and(eq(seats.id, seatId), active(licenseId)))
          .returning();
        if (removed) {
          const seat = toSeat(removed);
          await writeEffectsPg(tx, effects(seat));
          return { seat, changed: true };
        }
        const before = await readSeat(tx, licenseId, seatId);
        return before ? { seat: before, changed: false } : null;
      });
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
    async accept(seatId, userId, at, effects) {
      return db.transaction(async (tx) => {
        const [accepted] = await tx
          .update(seats)
          .set({ userId, acceptedAt: at, inviteTokenHash: null, inviteExpiresAt: null, updatedAt: at })
          .where(and(eq(seats.id, seatId), isNull(seats.removedAt), isNull(seats.acceptedAt)))
          .returning();
        if (!accepted) return null;
        const seat = toSeat(accepted);
        await writeEffectsPg(tx, effects(seat));
        return seat;
      });
    },
  };
}
