// SeatRepo on every engine: the rows of the seat state table (a new invite, a renewed one — re-invite
// or restore —, claims that are one-shot and not for removed or accepted seats, accept binding, soft
// removal), what counts against max_seats, the license an add holds, the portal lookups; a unit of work
// that throws leaves no seat and no effects; and 30 concurrent adds of distinct emails from 3
// connections against max_seats = 5, each the verb's unit of work (lockLicense, count, planSeatAdd,
// insert): exactly 5. The rules themselves are src/modules/seats/domain.ts's (domain.test.ts).
import { afterEach, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import * as sqliteSchema from "../../src/db/schema";
import * as pgSchema from "../../src/db/schema-pg";
import type { SeatInvite, SeatRepo } from "../../src/modules/seats/repo";
import { planSeatAdd } from "../../src/modules/seats/domain";
import { newId } from "../../src/shared/ids";
import { forEachEngine, type Opened } from "./harness";
import { seedCatalog, seedLicense, SEED_TIME } from "./seed";
import { repoFor } from "./repos";
import { audited, auditRows } from "./inspect";
import { unitOf, withPgUnits, type Unit } from "./unit";

const later = (ms: number) => new Date(SEED_TIME.getTime() + ms);
const WEEK = 7 * 24 * 3600 * 1000;

async function seedUser(o: Opened, email: string): Promise<string> {
  const id = newId();
  const row = { id, email, role: null, createdAt: SEED_TIME, lastSignInAt: null };
  if (o.sqlite) o.sqlite.db.insert(sqliteSchema.users).values(row).run();
  else await o.pg!.db.insert(pgSchema.users).values(row);
  return id;
}

async function storedHash(o: Opened, seatId: string): Promise<string | null> {
  if (o.sqlite) return o.sqlite.db.select().from(sqliteSchema.seats).where(eq(sqliteSchema.seats.id, seatId)).get()!.inviteTokenHash;
  const [r] = await o.pg!.db.select().from(pgSchema.seats).where(eq(pgSchema.seats.id, seatId));
  return r!.inviteTokenHash;
}

forEachEngine("SeatRepo", (engine, open) => {
  let o: Opened;
  let repo: SeatRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).seats;
  };
  afterEach(() => o?.close());
  const invite = (over: Partial<SeatInvite> = {}): SeatInvite => ({ role: "member", tokenHash: `hash-${newId()}`, inviteExpiresAt: later(WEEK), at: later(1000), ...over });
  const unit = () => unitOf(o);

  test("the rows of the state table: invite, renewal rotates the token, claim and accept bind, removal, renewal restores as pending", async () => {
    await setup();
    const { license } = await seedCatalog(o, { maxSeats: 3 });
    expect(await repo.findByEmail(license.id, "a@example.com")).toBeNull();
    const seat = await repo.insertInvite(license.id, "a@example.com", invite({ tokenHash: "h1", role: "admin" }));
    expect(seat).toMatchObject({ licenseId: license.id, email: "a@example.com", role: "admin", userId: null, acceptedAt: null, removedAt: null, invitedAt: later(1000), inviteExpiresAt: later(WEEK) });
    expect("inviteTokenHash" in seat).toBe(false);
    expect(await storedHash(o, seat.id)).toBe("h1");
    expect(await repo.findByEmail(license.id, "a@example.com")).toEqual(seat);

    // A renewal (re-invite): token rotated, role as asked now, same seat.
    const again = await repo.renewInvite(seat.id, invite({ tokenHash: "h2", role: "member", at: later(2000), inviteExpiresAt: later(2000 + WEEK) }));
    expect(again).toMatchObject({ id: seat.id, role: "member", invitedAt: later(2000), inviteExpiresAt: later(2000 + WEEK), updatedAt: later(2000) });
    expect(await storedHash(o, seat.id)).toBe("h2");
    expect(await repo.claimInvite("h1", later(2500))).toBeNull(); // the old token is dead

    // claim + accept → accepted, bound, token cleared.
    const userId = await seedUser(o, "a@example.com");
    const claimed = await repo.claimInvite("h2", later(3000));
    expect(claimed).toMatchObject({ id: seat.id, inviteExpiresAt: later(2000 + WEEK) });
    expect(await storedHash(o, seat.id)).toBeNull();
    expect(await repo.claimInvite("h2", later(3000))).toBeNull(); // one-shot
    const accepted = await repo.markAccepted(seat.id, userId, later(3000));
    expect(accepted).toMatchObject({ id: seat.id, userId, acceptedAt: later(3000), inviteExpiresAt: null });
    expect(await repo.markAccepted(seat.id, userId, later(3100))).toBeNull();
    expect(await repo.acceptedSeatOf(license.id, userId)).toEqual(accepted!);
    expect(await repo.acceptedSeatsOf(userId)).toEqual([accepted!]);
    expect(await repo.countActive([license.id])).toEqual(new Map([[license.id, 1]]));

    // remove → removed, token cleared; removing again changes nothing.
    const removed = await repo.markRemoved(license.id, seat.id, later(5000));
    expect(removed).toMatchObject({ id: seat.id, removedAt: later(5000), inviteExpiresAt: null });
    expect(await repo.markRemoved(license.id, seat.id, later(5100))).toBeNull();
    expect(await repo.get(license.id, seat.id)).toMatchObject({ removedAt: later(5000) });
    expect(await repo.acceptedSeatOf(license.id, userId)).toBeNull();
    expect(await repo.acceptedSeatsOf(userId)).toEqual([]);
    expect(await repo.findByEmail(license.id, "a@example.com")).toMatchObject({ id: seat.id, removedAt: later(5000) });

    // A renewal of a removed seat restores it as pending with a new invite, unbound.
    const restored = await repo.renewInvite(seat.id, invite({ tokenHash: "h4", at: later(6000) }));
    expect(restored).toMatchObject({ id: seat.id, removedAt: null, acceptedAt: null, userId: null, invitedAt: later(6000), role: "member" });
    expect(await storedHash(o, seat.id)).toBe("h4");
    // Rows only: none of these writes an audit row (the verbs write their effects).
    expect(await auditRows(o)).toEqual([]);
  });

  test("what counts against max_seats: pending and accepted seats, not removed ones; the license an add holds", async () => {
    await setup();
    const { license } = await seedCatalog(o, { maxSeats: 2 });
    const a = await repo.insertInvite(license.id, "a@example.com", invite());
    await repo.insertInvite(license.id, "b@example.com", invite({ at: later(1001) }));
    expect(await repo.countActive([license.id, "nope"])).toEqual(new Map([[license.id, 2], ["nope", 0]]));
    await repo.markRemoved(license.id, a.id, later(2000));
    expect(await repo.countActive([license.id])).toEqual(new Map([[license.id, 1]]));
    await repo.insertInvite(license.id, "c@example.com", invite({ at: later(3000) }));
    expect((await repo.list(license.id, { includeRemoved: false })).map((s) => s.email)).toEqual(["b@example.com", "c@example.com"]);
    expect((await repo.list(license.id, { includeRemoved: true })).map((s) => s.email)).toEqual(["a@example.com", "b@example.com", "c@example.com"]);

    const held = await unit()((r) => r.seats.lockLicense(license.id));
    expect(held).toMatchObject({ license: { id: license.id, email: license.email, status: "active" }, maxSeats: 2 });
    expect(await unit()((r) => r.seats.lockLicense(newId()))).toBeNull();
    const unlimited = await seedCatalog(o, { maxSeats: null });
    expect(await unit()((r) => r.seats.lockLicense(unlimited.license.id))).toMatchObject({ maxSeats: null });
  });

  test("a unit of work that throws leaves neither the seat nor its effects; one that ends keeps both", async () => {
    await setup();
    const { license } = await seedCatalog(o, { maxSeats: 4 });
    await expect(
      unit()(async (r) => {
        const seat = await r.seats.insertInvite(license.id, "a@example.com", invite());
        await r.outbox.writeEffects(audited("seat.invite", seat.id));
        throw new Error("refused after the write");
      }),
    ).rejects.toThrow("refused after the write");
    expect(await repo.list(license.id, { includeRemoved: true })).toEqual([]);
    expect(await auditRows(o)).toEqual([]);

    const kept = await unit()(async (r) => {
      const seat = await r.seats.insertInvite(license.id, "b@example.com", invite());
      await r.outbox.writeEffects(audited("seat.invite", seat.id));
      return seat;
    });
    expect((await repo.list(license.id, { includeRemoved: true })).map((s) => s.id)).toEqual([kept.id]);
    expect((await auditRows(o)).map((r) => [r.action, r.entityId])).toEqual([["seat.invite", kept.id]]);
  });

  test("claims: unknown, removed and accepted seats' tokens do not claim; a removed seat loses its token", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const added = await repo.insertInvite(license.id, "a@example.com", invite({ tokenHash: "ha" }));
    expect(await repo.claimInvite("unknown", later(2000))).toBeNull();
    await repo.markRemoved(license.id, added.id, later(2000));
    expect(await storedHash(o, added.id)).toBeNull();
    expect(await repo.claimInvite("ha", later(3000))).toBeNull();
    // A seat of another license is not removable through this one.
    const other = await seedLicense(o, license.productId, license.planId);
    const b = await repo.insertInvite(other.id, "b@example.com", invite({ tokenHash: "hb" }));
    expect(await repo.markRemoved(license.id, b.id, later(4000))).toBeNull();
    expect(await repo.get(license.id, b.id)).toBeNull();
    expect(await repo.get(other.id, b.id)).toMatchObject({ email: "b@example.com", removedAt: null });
    // accept of a removed seat is refused; an accepted seat's token does not claim.
    const userId = await seedUser(o, "a@example.com");
    expect(await repo.markAccepted(added.id, userId, later(5000))).toBeNull();
    const userB = await seedUser(o, "b@example.com");
    expect(await repo.claimInvite("hb", later(5000))).toMatchObject({ id: b.id });
    await repo.markAccepted(b.id, userB, later(5000));
    await repo.renewInvite(b.id, invite({ tokenHash: "hb2", at: later(5500) }));
    expect(await repo.markAccepted(b.id, userB, later(5600))).toMatchObject({ id: b.id, acceptedAt: later(5600) });
    expect(await repo.claimInvite("hb2", later(5700))).toBeNull();
  });

  test("an accepted seat whose user was deleted is unbound; the add plans a re-invite and the renewal makes it pending", async () => {
    await setup();
    const { license } = await seedCatalog(o, { maxSeats: 1 });
    const added = await repo.insertInvite(license.id, "a@example.com", invite({ tokenHash: "t1" }));
    const userId = await seedUser(o, "a@example.com");
    await repo.claimInvite("t1", later(1500));
    await repo.markAccepted(added.id, userId, later(1500));
    // The users row goes; seats.user_id is ON DELETE SET NULL.
    if (o.sqlite) o.sqlite.db.delete(sqliteSchema.users).where(eq(sqliteSchema.users.id, userId)).run();
    else await o.pg!.db.delete(pgSchema.users).where(eq(pgSchema.users.id, userId));
    const unbound = await repo.findByEmail(license.id, "a@example.com");
    expect(unbound).toMatchObject({ acceptedAt: later(1500), userId: null });
    expect(planSeatAdd(unbound, 1, 1)).toEqual({ kind: "reinvited", seatId: added.id });
    const again = await repo.renewInvite(added.id, invite({ tokenHash: "t2", at: later(2000) }));
    expect(again).toMatchObject({ id: added.id, acceptedAt: null, userId: null, invitedAt: later(2000) });
    expect(await storedHash(o, added.id)).toBe("t2");
  });

  test("licensesOwnedBy matches the owner email ASCII case-insensitively, newest first", async () => {
    await setup();
    const { license, plan, product } = await seedCatalog(o);
    const mixed = await seedLicense(o, product.id, plan.id, { email: "Owner@Example.COM", createdAt: later(10) });
    const lower = await seedLicense(o, product.id, plan.id, { email: "owner@example.com", createdAt: later(20) });
    expect((await repo.licensesOwnedBy("owner@example.com")).map((l) => l.id)).toEqual([lower.id, mixed.id]);
    expect((await repo.licensesOwnedBy("nobody@example.com")).length).toBe(0);
    expect((await repo.licensesOwnedBy(license.email)).map((l) => l.id)).toEqual([license.id]);
  });

  // On SQLite the three "connections" are one: a unit of work awaits inside its transaction, and a
  // second connection in the same process would wait for SQLite's lock synchronously, on the thread
  // the first unit needs to finish. Processes on one file are raced in test/race/seats.test.ts; here,
  // 30 units on one connection's gate (the requests of one process).
  test("30 concurrent adds of distinct emails (PostgreSQL: from 3 connections) against max_seats = 5: exactly 5", async () => {
    await setup();
    const { license } = await seedCatalog(o, { maxSeats: 5 });
    const race = async (units: Unit[]) => {
      // Each racer is the add verb's unit of work (service.ts addPortalSeat), its rule the domain's.
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          units[i % units.length]!(async (r) => {
            const email = `racer${i}@example.com`;
            const current = await r.seats.lockLicense(license.id);
            const existing = await r.seats.findByEmail(license.id, email);
            const used = (await r.seats.countActive([license.id])).get(license.id) ?? 0;
            const plan = planSeatAdd(existing, current!.maxSeats, used);
            if (plan.kind !== "invited") return plan.kind;
            const seat = await r.seats.insertInvite(license.id, email, invite({ at: later(i) }));
            await r.outbox.writeEffects(audited("seat.invite", seat.id));
            return plan.kind;
          }),
        ),
      );
      expect(results.filter((k) => k === "invited").length).toBe(5);
      expect(results.filter((k) => k === "limit").length).toBe(25);
    };
    if (engine === "postgres") await withPgUnits(o, 3, race);
    else await race([unitOf(o)]);
    expect((await repo.list(license.id, { includeRemoved: true })).length).toBe(5);
    expect((await auditRows(o)).length).toBe(5);
  });
});
