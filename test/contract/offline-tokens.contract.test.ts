// OfflineTokenRepo on every engine, through the verbs' units of work (offline/service.ts issueOffline,
// activateOffline, clearOffline): issue (the signer sees the license and plan, refusals write
// nothing, effects commit with it), self-service activate (one live row per license, taken answers
// write nothing, refusals roll back), the plan's portal_offline_activation setting read with the
// license (readOfflineAccess, issue, activate), clear (conditional, once), list order, findForVerify
// (live rows only, by key hash and identifier); and on PostgreSQL 12 racing self-service activations
// from 3 nodes: one row.
import { afterEach, expect, test } from "bun:test";
import type { OfflineAccess, OfflineTokenRepo } from "../../src/modules/offline/repo";
import { activateOffline, clearOffline, issueOffline, readOfflineAccess, type OfflineSigner } from "../../src/modules/offline/service";
import type { OfflineIssueRule } from "../../src/modules/offline/domain";
import type { Effects } from "../../src/modules/outbox/effects";
import { newId } from "../../src/shared/ids";
import { forEachEngine, type Opened } from "./harness";
import { seedCatalog, seedLicense, SEED_TIME } from "./seed";
import { repoFor } from "./repos";
import { audited, auditRows, outboxRows } from "./inspect";
import { unitOf, withPgUnits, type Unit } from "./unit";
import { event } from "../../src/modules/outbox/effects";

const later = (ms: number) => new Date(SEED_TIME.getTime() + ms);
const ADMIN: OfflineIssueRule = { kind: "admin", exp: 0 };

/** A signer that records what it saw and answers `tag` as the token, with `effects`. */
const signer =
  (tag: string, effects: (cur: OfflineAccess) => Effects, seen?: (cur: OfflineAccess) => void): OfflineSigner =>
  (cur, exp) => {
    seen?.(cur);
    return { result: { token: tag, fingerprint: "0123456789abcdef", exp }, effects: effects(cur) };
  };
const made = (tag = "made") => signer(tag, (cur) => audited("offline.create", cur.license.id));
const row = (identifier: string) => ({ id: newId(), identifier, createdBy: "user-1" });

const activateIn = (unit: Unit, licenseId: string, identifier: string, at: Date, sign: OfflineSigner = made()) =>
  unit((r) => activateOffline(r, licenseId, row(identifier), at, sign));

forEachEngine("OfflineTokenRepo", (engine, open) => {
  let o: Opened;
  let repo: OfflineTokenRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).offlineTokens;
  };
  afterEach(() => o?.close());
  const issue = (licenseId: string, rule: OfflineIssueRule, sign: OfflineSigner) => unitOf(o)((r) => issueOffline(r, licenseId, rule, later(0), sign));
  const activate = (licenseId: string, identifier: string, at: Date, sign?: OfflineSigner) => activateIn(unitOf(o), licenseId, identifier, at, sign);
  const clear = (licenseId: string, activationId: string, at: Date, by: string | null, effects: Parameters<typeof clearOffline>[5]) =>
    unitOf(o)((r) => clearOffline(r, licenseId, activationId, at, by, effects));

  test("issue: the signer sees the license and plan; its effects commit; a refusal writes nothing", async () => {
    await setup();
    const { license, plan } = await seedCatalog(o, { graceDays: 4 });
    let seen: OfflineAccess | null = null;
    const out = await issue(
      license.id,
      ADMIN,
      signer(
        "t42",
        () => ({ ...audited("offline.issue", license.id), events: [event("license.created", SEED_TIME, { license_id: license.id, product_id: license.productId, plan_id: plan.id, status: "active", valid_until: null, support_until: null })] }),
        (cur) => (seen = cur),
      ),
    );
    expect(out).toEqual({ token: "t42", fingerprint: "0123456789abcdef", exp: 0 });
    expect(seen!).toMatchObject({ license: { id: license.id, status: "active" }, plan: { id: plan.id, graceDays: 4 } });
    expect((await auditRows(o)).map((r) => r.action)).toEqual(["offline.issue"]);
    expect((await outboxRows(o)).map((r) => r.topic)).toEqual(["license.created"]);
    const suspended = await seedLicense(o, license.productId, plan.id, { status: "suspended" });
    let signed = false;
    const refuse = signer("t0", () => audited("offline.issue", suspended.id), () => (signed = true));
    await expect(issue(suspended.id, ADMIN, refuse)).rejects.toMatchObject({ code: "INVALID_TRANSITION" });
    await expect(issue(suspended.id, { kind: "self-service" }, refuse)).rejects.toMatchObject({ code: "INVALID_TRANSITION" });
    expect(signed).toBe(false);
    expect((await auditRows(o)).length).toBe(1);
    // An unknown license is NOT_FOUND (domain.ts planOfflineIssue), nothing signed or written.
    await expect(issue(newId(), ADMIN, refuse)).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(signed).toBe(false);
    expect((await auditRows(o)).length).toBe(1);
  });

  test("activate: one live row per license; a second answers taken and writes nothing; a refusal rolls back", async () => {
    await setup();
    const { license, plan } = await seedCatalog(o);
    const first = await activate(license.id, "box-1", later(0));
    if (first.kind !== "created") throw new Error("expected created");
    expect(first.result.token).toBe("made");
    expect(first.activation).toMatchObject({ licenseId: license.id, identifier: "box-1", clearedAt: null, clearedBy: null, createdBy: "user-1" });
    expect(await repo.findLive(license.id)).toEqual(first.activation);
    let called = false;
    const second = await activate(license.id, "box-2", later(1), signer("x", (cur) => audited("offline.create", cur.license.id), () => (called = true)));
    expect(called).toBe(false);
    expect(second).toEqual({ kind: "taken", existing: first.activation });
    expect((await auditRows(o)).length).toBe(1);
    // Refused (a suspended license): no row, no audit.
    const suspended = await seedLicense(o, license.productId, plan.id, { status: "suspended" });
    await expect(activate(suspended.id, "box-3", later(2))).rejects.toMatchObject({ code: "INVALID_TRANSITION" });
    expect(await repo.findLive(suspended.id)).toBeNull();
    expect(await repo.listByLicense(suspended.id)).toEqual([]);
    expect((await auditRows(o)).length).toBe(1);
    // An unknown license: NOT_FOUND, nothing written.
    await expect(activate(newId(), "box-4", later(3))).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect((await auditRows(o)).length).toBe(1);
  });

  test("readOfflineAccess, issue and activate carry the plan's portal_offline_activation setting", async () => {
    await setup();
    const on = await seedCatalog(o, { graceDays: 2 });
    const off = await seedCatalog(o, { portalOfflineActivation: false });
    const repos = repoFor(o);
    expect(await readOfflineAccess(repos, on.license.id)).toMatchObject({ license: { id: on.license.id }, plan: { id: on.plan.id, graceDays: 2, portalOfflineActivation: true } });
    expect(await readOfflineAccess(repos, off.license.id)).toMatchObject({ plan: { id: off.plan.id, portalOfflineActivation: false } });
    expect(await readOfflineAccess(repos, newId())).toBeNull();
    const seen: (boolean | undefined)[] = [];
    const record = (tag: string) => signer(tag, () => ({}), (cur) => seen.push(cur.plan.portalOfflineActivation));
    await issue(off.license.id, ADMIN, record("a"));
    await activate(on.license.id, "box-1", later(0), record("b"));
    expect(seen).toEqual([false, true]);
    // The portal's rules refuse a plan with the setting off (403), as the HTTP tests pin.
    await expect(activate(off.license.id, "box-2", later(0))).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  test("clear: once, conditionally, with its effects; the license may then make a new one; list is newest first", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const other = await seedCatalog(o);
    const first = await activate(license.id, "box-1", later(0));
    if (first.kind !== "created") throw new Error("expected created");
    // Wrong license, unknown id: nothing.
    expect(await clear(other.license.id, first.activation.id, later(5), "admin-1", () => audited("x", null))).toBeNull();
    expect(await clear(license.id, newId(), later(5), "admin-1", () => audited("x", null))).toBeNull();
    const cleared = await clear(license.id, first.activation.id, later(5), "admin-1", (a) => audited("offline.clear", a.licenseId));
    expect(cleared).toEqual({ ...first.activation, clearedAt: later(5), clearedBy: "admin-1" });
    expect(await clear(license.id, first.activation.id, later(6), "admin-2", () => audited("offline.clear", null))).toBeNull();
    expect((await auditRows(o)).map((r) => r.action).filter((a) => a === "offline.clear")).toEqual(["offline.clear"]);
    expect((await auditRows(o)).map((r) => r.action).filter((a) => a === "x")).toEqual([]);
    expect(await repo.findLive(license.id)).toBeNull();
    const again = await activate(license.id, "box-2", later(10));
    expect(again.kind).toBe("created");
    const list = await repo.listByLicense(license.id);
    expect(list.map((a) => [a.identifier, a.clearedAt])).toEqual([
      ["box-2", null],
      ["box-1", later(5)],
    ]);
  });

  test("findForVerify: the license by key hash when the identifier has a live offline activation", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    expect(await repo.findForVerify(license.keyHash, "box-1")).toBeNull();
    const first = await activate(license.id, "box-1", later(0));
    if (first.kind !== "created") throw new Error("expected created");
    expect(await repo.findForVerify(license.keyHash, "box-1")).toMatchObject({ license: { id: license.id }, plan: { id: license.planId } });
    expect(await repo.findForVerify(license.keyHash, "box-2")).toBeNull();
    expect(await repo.findForVerify("hash-unknown", "box-1")).toBeNull();
    await clear(license.id, first.activation.id, later(1), null, () => ({}));
    expect(await repo.findForVerify(license.keyHash, "box-1")).toBeNull();
  });

  test("a deleted license takes its offline activations with it", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    await activate(license.id, "box-1", later(0));
    if (o.sqlite) o.sqlite.sqlite.run(`DELETE FROM licenses WHERE id = '${license.id}'`);
    else await o.pg!.sql`DELETE FROM licenses WHERE id = ${license.id}`;
    expect(await repo.listByLicense(license.id)).toEqual([]);
  });

  if (engine === "postgres") {
    test("12 concurrent self-service activations of one license from 3 nodes: exactly one row", async () => {
      await setup();
      const { license } = await seedCatalog(o);
      const results = await withPgUnits(o, 3, (units) =>
        Promise.all(Array.from({ length: 12 }, (_, i) => activateIn(units[i % 3]!, license.id, `box-${i}`, later(i), made(`r${i}`)))),
      );
      expect(results.filter((r) => r.kind === "created").length).toBe(1);
      expect(results.filter((r) => r.kind === "taken").length).toBe(11);
      expect((await repo.listByLicense(license.id)).length).toBe(1);
      expect((await auditRows(o)).length).toBe(1);
    });
  }
});
