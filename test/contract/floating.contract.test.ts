// FloatingRepo on every engine: checkout (new, refresh, relabel, limit, expired sessions dropped and
// never revived), decide refusals, the Idempotency outcome, heartbeat, checkin, listActive order and
// the expire job pass; and on PostgreSQL 30 checkouts from 3 nodes racing for 3 seats.
import { afterEach, expect, test } from "bun:test";
import type { CheckoutChange, ExpiredSession, FloatingLimits, FloatingRepo, FloatingSession } from "../../src/modules/floating/repo";
import type { LicenseAccess } from "../../src/modules/license-api/repo";
import { ClaimLostError } from "../../src/modules/idempotency/repo";
import { AppError } from "../../src/shared/errors";
import { newId } from "../../src/shared/ids";
import { forEachEngine, type Opened } from "./harness";
import { insertRows, seedCatalog, seedLicense, SEED_TIME } from "./seed";
import { repoFor } from "./repos";
import { audited, auditRows, claimState, completion, countRows, outboxRows, pgNodes, seedClaim } from "./inspect";
import { event } from "../../src/modules/outbox/effects";

const later = (ms: number) => new Date(SEED_TIME.getTime() + ms);
const limits = (max: number | null, timeoutMs = 60_000) => (cur: LicenseAccess | null): FloatingLimits => {
  if (!cur || cur.license.status !== "active") throw new AppError("LICENSE_INACTIVE");
  return { max, timeoutMs };
};

forEachEngine("FloatingRepo", (engine, open) => {
  let o: Opened;
  let repo: FloatingRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).floating;
  };
  afterEach(() => o?.close());
  const co = (licenseId: string, identifier: string, at: Date, label: string | null = null) => ({ licenseId, identifier, label, at });

  test("checkout opens sessions up to max, refreshes a live one (label kept unless given), refuses at the limit", async () => {
    await setup();
    const { license } = await seedCatalog(o, { floating: true });
    let seen: LicenseAccess | null = null;
    const first = await repo.checkout(co(license.id, "a", later(0), "Desk"), (cur) => {
      seen = cur;
      return { max: 2, timeoutMs: 60_000 };
    });
    expect(seen!).toMatchObject({ license: { id: license.id }, plan: { floating: true } });
    if (first.kind !== "ok") throw new Error("expected ok");
    const session: FloatingSession = { id: first.session.id, licenseId: license.id, identifier: "a", label: "Desk", createdAt: later(0), heartbeatAt: later(0), expiresAt: later(60_000) };
    expect(first).toEqual({ kind: "ok", session, active: 1, max: 2 });
    const refreshed = await repo.checkout(co(license.id, "a", later(10_000)), limits(2));
    expect(refreshed).toEqual({ kind: "ok", session: { ...session, heartbeatAt: later(10_000), expiresAt: later(70_000) }, active: 1, max: 2 });
    const relabeled = await repo.checkout(co(license.id, "a", later(11_000), "Lab"), limits(2));
    expect(relabeled).toMatchObject({ kind: "ok", session: { id: session.id, label: "Lab", expiresAt: later(71_000) }, active: 1 });
    expect(await repo.checkout(co(license.id, "b", later(12_000)), limits(2))).toMatchObject({ kind: "ok", active: 2, session: { identifier: "b", label: null } });
    expect(await repo.checkout(co(license.id, "c", later(13_000)), limits(2))).toEqual({ kind: "limit", active: 2, max: 2 });
    // A live identifier still refreshes at the limit.
    expect(await repo.checkout(co(license.id, "b", later(14_000)), limits(2))).toMatchObject({ kind: "ok", active: 2 });
    expect(await repo.checkout(co(license.id, "c", later(15_000)), limits(null))).toMatchObject({ kind: "ok", active: 3, max: null });
    expect((await repo.listActive(license.id, later(15_000))).map((s) => [s.identifier, s.label])).toEqual([
      ["a", "Lab"],
      ["b", null],
      ["c", null],
    ]);
  });

  test("expired sessions never count and are never revived: checkout drops them and opens a new one", async () => {
    await setup();
    const { license, product, plan } = await seedCatalog(o);
    const other = await seedLicense(o, product.id, plan.id);
    const first = await repo.checkout(co(license.id, "a", later(0)), limits(1, 1000));
    if (first.kind !== "ok") throw new Error("expected ok");
    await repo.checkout(co(other.id, "z", later(0)), limits(1, 1000));
    // At expires_at exactly the session is dead.
    expect(await repo.heartbeat(license.id, "a", later(1000), later(2000))).toBeNull();
    const second = await repo.checkout(co(license.id, "b", later(1000)), limits(1, 1000));
    expect(second).toMatchObject({ kind: "ok", active: 1, session: { identifier: "b" } });
    const again = await repo.checkout(co(license.id, "a", later(5000)), limits(2, 1000));
    if (again.kind !== "ok") throw new Error("expected ok");
    expect(again.session.id).not.toBe(first.session.id);
    expect(again.session.createdAt).toEqual(later(5000));
    expect(again.active).toBe(1);
    // Only this license's dead rows were dropped.
    expect(await countRows(o, "floatingSessions", license.id)).toBe(1);
    expect(await countRows(o, "floatingSessions", other.id)).toBe(1);
  });

  test("a throwing decide writes nothing; a lost claim undoes the checkout", async () => {
    await setup();
    const { license, product, plan } = await seedCatalog(o);
    const revoked = await seedLicense(o, product.id, plan.id, { status: "revoked" });
    await insertRows(o, "floatingSessions", [
      { id: newId(), licenseId: revoked.id, identifier: "old", label: null, createdAt: SEED_TIME, heartbeatAt: SEED_TIME, expiresAt: later(1) },
    ]);
    await expect(repo.checkout(co(revoked.id, "a", later(100)), limits(5))).rejects.toBeInstanceOf(AppError);
    // Not even the expired row was dropped.
    expect(await countRows(o, "floatingSessions", revoked.id)).toBe(1);
    let seen: LicenseAccess | null | undefined;
    await expect(repo.checkout(co("nope", "a", later(100)), (cur) => ((seen = cur), limits(5)(cur)))).rejects.toBeInstanceOf(AppError);
    expect(seen).toBeNull();

    const claimedAt = later(1);
    const scope = await seedClaim(o, claimedAt);
    const ok = await repo.checkout(co(license.id, "a", later(100)), limits(5), (r) => completion(scope, claimedAt, `active=${r.active}`));
    expect(ok.kind).toBe("ok");
    expect(await claimState(o, scope)).toEqual({ state: "done", responseStatus: 200, responseSealed: "active=1" });
    await expect(repo.checkout(co(license.id, "b", later(200)), limits(5), () => completion(scope, claimedAt, "again"))).rejects.toBeInstanceOf(ClaimLostError);
    await expect(repo.checkout(co(license.id, "a", later(300), "new"), limits(5), () => completion(scope, claimedAt, "again"))).rejects.toBeInstanceOf(ClaimLostError);
    const live = await repo.listActive(license.id, later(300));
    expect(live.map((s) => [s.identifier, s.label, s.expiresAt])).toEqual([["a", null, later(60_100)]]);
    // A refusal at the limit does not record.
    let recorded = false;
    expect(await repo.checkout(co(license.id, "c", later(400)), limits(1), () => ((recorded = true), completion(scope, claimedAt, "x")))).toEqual({ kind: "limit", active: 1, max: 1 });
    expect(recorded).toBe(false);
  });

  test("heartbeat extends a live session, checkin releases it; both null without one", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const a = await repo.checkout(co(license.id, "a", later(0)), limits(5));
    await repo.checkout(co(license.id, "b", later(0)), limits(5));
    if (a.kind !== "ok") throw new Error("expected ok");
    expect(await repo.heartbeat(license.id, "a", later(30_000), later(90_000))).toEqual({
      session: { ...a.session, heartbeatAt: later(30_000), expiresAt: later(90_000) },
      active: 2,
    });
    expect(await repo.heartbeat(license.id, "zz", later(30_000), later(90_000))).toBeNull();
    expect(await repo.heartbeat("nope", "a", later(30_000), later(90_000))).toBeNull();
    // b expired at 60 s: a heartbeat at 61 s counts only a.
    expect(await repo.heartbeat(license.id, "a", later(61_000), later(121_000))).toMatchObject({ active: 1 });
    expect(await repo.heartbeat(license.id, "b", later(61_000), later(121_000))).toBeNull();
    expect(await repo.checkin(license.id, "a", later(62_000))).toEqual({
      session: { ...a.session, heartbeatAt: later(61_000), expiresAt: later(121_000) },
      active: 0,
    });
    expect(await repo.checkin(license.id, "a", later(62_000))).toBeNull();
    expect(await repo.checkin(license.id, "b", later(62_000))).toBeNull();
  });

  test("listActive orders live sessions by (created_at, id); expire deletes and returns those expired before the instant", async () => {
    await setup();
    const { license, product, plan } = await seedCatalog(o);
    const other = await seedLicense(o, product.id, plan.id);
    const ids = [newId(), newId(), newId(), newId()].sort();
    const row = (id: string, licenseId: string, identifier: string, createdAt: Date, expiresAt: Date): FloatingSession => ({
      id,
      licenseId,
      identifier,
      label: null,
      createdAt,
      heartbeatAt: createdAt,
      expiresAt,
    });
    const rows = [
      row(ids[3]!, license.id, "late", later(5), later(10_000)),
      row(ids[1]!, license.id, "tie-b", later(1), later(10_000)),
      row(ids[0]!, license.id, "tie-a", later(1), later(2_000)),
      row(ids[2]!, other.id, "x", later(0), later(1_000)),
    ];
    await insertRows(o, "floatingSessions", rows as unknown as Record<string, unknown>[]);
    expect((await repo.listActive(license.id, later(0))).map((s) => s.identifier)).toEqual(["tie-a", "tie-b", "late"]);
    expect((await repo.listActive(license.id, later(2_000))).map((s) => s.identifier)).toEqual(["tie-b", "late"]);
    expect(await repo.listActive("nope", later(0))).toEqual([]);

    // Strictly before: the session expiring at 2 000 survives expire(2 000).
    const byId = (a: FloatingSession, b: FloatingSession) => (a.id < b.id ? -1 : 1);
    expect((await repo.expire(later(2_000), 1000)).sort(byId)).toEqual([rows[3]!]);
    // One batch deletes at most its limit.
    expect(await repo.expire(later(2_001), 0)).toEqual([]);
    expect((await repo.expire(later(2_001), 1000)).sort(byId)).toEqual([rows[2]!]);
    expect(await repo.expire(later(2_001), 1000)).toEqual([]);
    expect(await countRows(o, "floatingSessions")).toBe(2);
  });

  test("effects: checkout reports opened / refreshed / refused and the expired sessions it dropped; checkin and expire report theirs", async () => {
    await setup();
    const { license, product, plan } = await seedCatalog(o, { floating: true });
    const other = await seedLicense(o, product.id, plan.id);
    const seen: CheckoutChange[] = [];
    const track = (c: CheckoutChange) => (seen.push(c), audited("floating.test", c.outcome.kind));
    const a = await repo.checkout(co(license.id, "a", later(0)), limits(1, 1_000), undefined, track);
    await repo.checkout(co(license.id, "a", later(500)), limits(1, 1_000), undefined, track);
    await repo.checkout(co(license.id, "b", later(600)), limits(1, 1_000), undefined, track);
    // At 2 000 a has expired (1 500): b's checkout drops it and opens a new session.
    const b = await repo.checkout(co(license.id, "b", later(2_000)), limits(1, 1_000), undefined, track);
    if (a.kind !== "ok" || b.kind !== "ok") throw new Error("expected ok");
    expect(seen.map((c) => [c.outcome.kind, c.opened, c.expired.map((x) => x.identifier)])).toEqual([
      ["ok", true, []],
      ["ok", false, []],
      ["limit", false, []],
      ["ok", true, ["a"]],
    ]);
    expect(seen[3]!.expired).toEqual([{ ...a.session, heartbeatAt: later(500), expiresAt: later(1_500) }]);
    expect((await auditRows(o)).map((r) => r.entityId)).toEqual(["limit", "ok", "ok", "ok"]);

    // checkin: effects sees the released session and the live count; nothing written without one.
    let released: unknown = null;
    expect(await repo.checkin(license.id, "b", later(2_100), (r) => ((released = r), audited("floating.checkin", r.session.id)))).toMatchObject({ active: 0 });
    expect(released).toEqual({ session: b.session, active: 0 });
    expect(await repo.checkin(license.id, "b", later(2_100), () => { throw new Error("not called"); })).toBeNull();
    // A throwing effects callback keeps the session.
    await repo.checkout(co(license.id, "c", later(2_200)), limits(1, 1_000));
    await expect(repo.checkin(license.id, "c", later(2_300), () => { throw new Error("refused"); })).rejects.toThrow("refused");
    expect((await repo.listActive(license.id, later(2_300))).map((x) => x.identifier)).toEqual(["c"]);

    // expire: the sessions with their license's product, in one call; no call when nothing expired.
    await repo.checkout(co(other.id, "d", later(2_200)), limits(1, 1_000));
    let expired: ExpiredSession[] = [];
    const gone = await repo.expire(later(5_000), 1000, (e) => ((expired = e), audited("floating.expire", String(e.length))));
    expect(gone.map((x) => x.identifier).sort()).toEqual(["c", "d"]);
    expect(expired.map((e) => [e.session.identifier, e.productId]).sort()).toEqual([["c", product.id], ["d", product.id]]);
    expect(await repo.expire(later(5_000), 1000, () => { throw new Error("not called"); })).toEqual([]);
    expect((await auditRows(o)).filter((r) => r.action === "floating.expire").map((r) => r.entityId)).toEqual(["2"]);
  });

  if (engine === "postgres") {
    test("30 concurrent checkouts of distinct identifiers from 3 nodes against 3 seats: exactly 3", async () => {
      await setup();
      const { license } = await seedCatalog(o, { floating: true });
      // Dead sessions on the license: checkouts drop them under the same lock.
      await insertRows(o, "floatingSessions", [
        { id: newId(), licenseId: license.id, identifier: "dead", label: null, createdAt: SEED_TIME, heartbeatAt: SEED_TIME, expiresAt: later(-1) },
      ]);
      const nodes = await pgNodes(o, 3);
      try {
        const results = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            // One audit row per opened session and per dropped dead one, written with the checkout.
            nodes.repos[i % 3]!.floating.checkout(co(license.id, `seat-${i}`, later(i)), limits(3), undefined, (c) => ({
              ...(c.opened ? audited("floating.opened", c.outcome.kind) : {}),
              events: c.expired.map((x) => event("floating.expired", later(i), { session_id: x.id, license_id: x.licenseId, product_id: "p", identifier: x.identifier, expired_at: x.expiresAt.toISOString() })),
            })),
          ),
        );
        expect(results.filter((r) => r.kind === "ok").length).toBe(3);
        expect(results.filter((r) => r.kind === "limit").length).toBe(27);
        // The dead session was dropped (and reported) by exactly one checkout; three opened.
        expect((await auditRows(o)).length).toBe(3);
        expect((await outboxRows(o)).map((r) => r.topic)).toEqual(["floating.expired"]);
        expect(await countRows(o, "floatingSessions", license.id)).toBe(3);
        expect((await repo.listActive(license.id, later(100))).length).toBe(3);
      } finally {
        await nodes.close();
      }
    });
  }
});
