// SeatRepo on every engine: the seat state table (invite, re-invite rotates the token, accepted stays,
// removed is restored), max_seats counting pending + accepted, the check callback, invite claims
// (one-shot, not for removed or accepted seats), accept binding, soft removal, the portal lookups; and
// 30 concurrent adds of distinct emails from 3 connections against max_seats = 5: exactly 5.
import { afterEach, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import * as sqliteSchema from "../../src/db/schema";
import * as pgSchema from "../../src/db/schema-pg";
import { openDatabase } from "../../src/db/client";
import { createSqliteRepos } from "../../src/container";
import type { NewSeatInvite, SeatLicense, SeatRepo } from "../../src/modules/seats/repo";
import { AppError } from "../../src/shared/errors";
import { newId } from "../../src/shared/ids";
import { forEachEngine, type Opened } from "./harness";
import { seedCatalog, seedLicense, SEED_TIME } from "./seed";
import { repoFor } from "./repos";
import { audited, auditRows, pgNodes } from "./inspect";

const later = (ms: number) => new Date(SEED_TIME.getTime() + ms);
const WEEK = 7 * 24 * 3600 * 1000;
const noCheck = (cur: SeatLicense | null) => {
  if (!cur) throw new AppError("LICENSE_NOT_FOUND");
};
const none = () => ({});

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
  const invite = (licenseId: string, email: string, over: Partial<NewSeatInvite> = {}): NewSeatInvite => ({
    licenseId,
    email,
    role: "member",
    tokenHash: `hash-${newId()}`,
    inviteExpiresAt: later(WEEK),
    at: later(1000),
    ...over,
  });

  test("the seat state table: invite, re-invite rotates the token, accepted stays, removed is restored as pending", async () => {
    await setup();
    const { license } = await seedCatalog(o, { maxSeats: 3 });
    const first = await repo.add(invite(license.id, "a@example.com", { tokenHash: "h1", role: "admin" }), noCheck, (c) => audited(`seat.${c.kind}`, c.seat.id));
    expect(first.kind).toBe("invited");
    if (first.kind === "limit") throw new Error("unexpected");
    const seat = first.seat;
    expect(seat).toMatchObject({ licenseId: license.id, email: "a@example.com", role: "admin", userId: null, acceptedAt: null, removedAt: null, inviteExpiresAt: later(WEEK) });
    expect("inviteTokenHash" in seat).toBe(false);
    expect(first.license.id).toBe(license.id);
    expect(await storedHash(o, seat.id)).toBe("h1");

    // pending + add → pending, token rotated, role as asked now, same seat.
    const again = await repo.add(invite(license.id, "a@example.com", { tokenHash: "h2", role: "member", at: later(2000), inviteExpiresAt: later(2000 + WEEK) }), noCheck, (c) => audited(`seat.${c.kind}`, c.seat.id));
    expect(again.kind).toBe("reinvited");
    if (again.kind === "limit") throw new Error("unexpected");
    expect(again.seat).toMatchObject({ id: seat.id, role: "member", invitedAt: later(2000), inviteExpiresAt: later(2000 + WEEK) });
    expect(await storedHash(o, seat.id)).toBe("h2");
    expect(await repo.claimInvite("h1", later(2500))).toBeNull(); // the old token is dead

    // claim + accept → accepted, bound, token cleared.
    const userId = await seedUser(o, "a@example.com");
    const claimed = await repo.claimInvite("h2", later(3000));
    expect(claimed).toMatchObject({ id: seat.id, inviteExpiresAt: later(2000 + WEEK) });
    expect(await storedHash(o, seat.id)).toBeNull();
    expect(await repo.claimInvite("h2", later(3000))).toBeNull(); // one-shot
    const accepted = await repo.accept(seat.id, userId, later(3000), (s) => audited("seat.accepted", s.id));
    expect(accepted).toMatchObject({ id: seat.id, userId, acceptedAt: later(3000), inviteExpiresAt: null });
    expect(await repo.accept(seat.id, userId, later(3100), () => audited("seat.accepted.twice", seat.id))).toBeNull();

    // accepted + add → the same seat, nothing written (the token offered is not stored).
    const existing = await repo.add(invite(license.id, "a@example.com", { tokenHash: "h3", role: "admin", at: later(4000) }), noCheck, (c) => (c.kind === "existing" ? {} : audited("wrong", null)));
    expect(existing.kind).toBe("existing");
    if (existing.kind === "limit") throw new Error("unexpected");
    expect(existing.seat).toEqual(accepted!);
    expect(await storedHash(o, seat.id)).toBeNull();
    expect(await repo.acceptedSeatOf(license.id, userId)).toEqual(accepted!);
    expect(await repo.acceptedSeatsOf(userId)).toEqual([accepted!]);

    // remove → removed; removing again changes nothing and writes nothing.
    const removed = await repo.remove(license.id, seat.id, later(5000), (s) => audited("seat.removed", s.id));
    expect(removed).toMatchObject({ changed: true, seat: { id: seat.id, removedAt: later(5000) } });
    expect(await repo.remove(license.id, seat.id, later(5100), () => audited("seat.removed.twice", seat.id))).toMatchObject({ changed: false, seat: { removedAt: later(5000) } });
    expect(await repo.acceptedSeatOf(license.id, userId)).toBeNull();
    expect(await repo.acceptedSeatsOf(userId)).toEqual([]);

    // removed + add → restored as pending with a new invite, unbound.
    const restored = await repo.add(invite(license.id, "a@example.com", { tokenHash: "h4", at: later(6000) }), noCheck, (c) => audited(`seat.${c.kind}`, c.seat.id));
    expect(restored.kind).toBe("restored");
    if (restored.kind === "limit") throw new Error("unexpected");
    expect(restored.seat).toMatchObject({ id: seat.id, removedAt: null, acceptedAt: null, userId: null, invitedAt: later(6000), role: "member" });
    expect(await storedHash(o, seat.id)).toBe("h4");

    expect((await auditRows(o)).map((r) => r.action).sort()).toEqual(["seat.accepted", "seat.invited", "seat.reinvited", "seat.removed", "seat.restored"]);
  });

  test("max_seats counts pending and accepted seats, not removed ones; null is unlimited", async () => {
    await setup();
    const { license } = await seedCatalog(o, { maxSeats: 2 });
    const a = await repo.add(invite(license.id, "a@example.com"), noCheck, none);
    await repo.add(invite(license.id, "b@example.com"), noCheck, none);
    const refused = await repo.add(invite(license.id, "c@example.com"), noCheck, () => audited("wrong", null));
    expect(refused).toEqual({ kind: "limit", max: 2, used: 2 });
    // Re-inviting a pending seat at the limit is fine (it takes no new room).
    expect((await repo.add(invite(license.id, "b@example.com"), noCheck, none)).kind).toBe("reinvited");
    if (a.kind === "limit") throw new Error("unexpected");
    await repo.remove(license.id, a.seat.id, later(2000), none);
    expect((await repo.add(invite(license.id, "c@example.com"), noCheck, none)).kind).toBe("invited");
    // a was removed; restoring it needs room again.
    expect(await repo.add(invite(license.id, "a@example.com"), noCheck, none)).toEqual({ kind: "limit", max: 2, used: 2 });
    expect((await repo.list(license.id, { includeRemoved: false })).map((s) => s.email)).toEqual(["b@example.com", "c@example.com"]);
    expect((await repo.list(license.id, { includeRemoved: true })).map((s) => s.email)).toEqual(["a@example.com", "b@example.com", "c@example.com"]);
    expect(await repo.countActive([license.id, "nope"])).toEqual(new Map([[license.id, 2], ["nope", 0]]));
    expect(await auditRows(o)).toEqual([]);

    const unlimited = await seedCatalog(o, { maxSeats: null });
    for (let i = 0; i < 12; i++) expect((await repo.add(invite(unlimited.license.id, `u${i}@example.com`), noCheck, none)).kind).toBe("invited");
  });

  test("check sees the current license and may refuse; a throwing effects callback writes nothing", async () => {
    await setup();
    const { license } = await seedCatalog(o, { maxSeats: 4 });
    let seen: SeatLicense | null = null;
    await repo.add(invite(license.id, "a@example.com"), (cur) => void (seen = cur), none);
    expect(seen!).toMatchObject({ license: { id: license.id, email: license.email, status: "active" }, maxSeats: 4 });
    await expect(repo.add(invite(newId(), "a@example.com"), noCheck, none)).rejects.toThrow(AppError);
    await expect(
      repo.add(invite(license.id, "b@example.com"), () => {
        throw new AppError("LICENSE_NOT_FOUND");
      }, none),
    ).rejects.toThrow(AppError);
    await expect(repo.add(invite(license.id, "c@example.com"), noCheck, () => { throw new Error("no effects"); })).rejects.toThrow("no effects");
    expect((await repo.list(license.id, { includeRemoved: true })).map((s) => s.email)).toEqual(["a@example.com"]);
  });

  test("claims: unknown, removed and accepted seats' tokens do not claim; a removed seat loses its token", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const added = await repo.add(invite(license.id, "a@example.com", { tokenHash: "ha" }), noCheck, none);
    if (added.kind === "limit") throw new Error("unexpected");
    expect(await repo.claimInvite("unknown", later(2000))).toBeNull();
    await repo.remove(license.id, added.seat.id, later(2000), none);
    expect(await storedHash(o, added.seat.id)).toBeNull();
    expect(await repo.claimInvite("ha", later(3000))).toBeNull();
    // A seat of another license is not removable through this one.
    const other = await seedLicense(o, license.productId, license.planId);
    const b = await repo.add(invite(other.id, "b@example.com"), noCheck, none);
    if (b.kind === "limit") throw new Error("unexpected");
    expect(await repo.remove(license.id, b.seat.id, later(4000), none)).toBeNull();
    expect(await repo.get(license.id, b.seat.id)).toBeNull();
    expect(await repo.get(other.id, b.seat.id)).toMatchObject({ email: "b@example.com" });
    // accept of a removed seat is refused.
    const userId = await seedUser(o, "a@example.com");
    expect(await repo.accept(added.seat.id, userId, later(5000), none)).toBeNull();
  });

  test("an accepted seat whose user was deleted (unbound) is invited again by an add", async () => {
    await setup();
    const { license } = await seedCatalog(o, { maxSeats: 1 });
    const added = await repo.add(invite(license.id, "a@example.com", { tokenHash: "t1" }), noCheck, none);
    if (added.kind === "limit") throw new Error("unexpected");
    const userId = await seedUser(o, "a@example.com");
    await repo.claimInvite("t1", later(1500));
    await repo.accept(added.seat.id, userId, later(1500), none);
    // The users row goes; seats.user_id is ON DELETE SET NULL.
    if (o.sqlite) o.sqlite.db.delete(sqliteSchema.users).where(eq(sqliteSchema.users.id, userId)).run();
    else await o.pg!.db.delete(pgSchema.users).where(eq(pgSchema.users.id, userId));
    const again = await repo.add(invite(license.id, "a@example.com", { tokenHash: "t2", at: later(2000) }), noCheck, none);
    expect(again).toMatchObject({ kind: "reinvited", seat: { id: added.seat.id, acceptedAt: null, userId: null, invitedAt: later(2000) } });
    expect(await storedHash(o, added.seat.id)).toBe("t2");
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

  test("30 concurrent adds of distinct emails from 3 connections against max_seats = 5: exactly 5", async () => {
    await setup();
    const { license } = await seedCatalog(o, { maxSeats: 5 });
    let nodes: { repos: SeatRepo[]; close(): Promise<void> };
    if (engine === "postgres") {
      const pg = await pgNodes(o, 3);
      nodes = { repos: pg.repos.map((r) => r.seats), close: pg.close };
    } else {
      // Separate connections to the same file: SQLite serialises their write transactions.
      const handles = [0, 1, 2].map(() => openDatabase(o.sqlite!.sqlite.filename));
      nodes = { repos: handles.map((h) => createSqliteRepos(h).seats), close: async () => void (await Promise.all(handles.map((h) => h.close()))) };
    }
    try {
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          nodes.repos[i % 3]!.add(invite(license.id, `racer${i}@example.com`, { at: later(i) }), noCheck, (c) => audited("seat.invited", c.seat.id)),
        ),
      );
      expect(results.filter((r) => r.kind === "invited").length).toBe(5);
      expect(results.filter((r) => r.kind === "limit").length).toBe(25);
      expect((await repo.list(license.id, { includeRemoved: true })).length).toBe(5);
      expect((await auditRows(o)).length).toBe(5);
    } finally {
      await nodes.close();
    }
  });
});
