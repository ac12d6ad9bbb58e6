// OfflineTokenRepo on every engine: issue (decide sees the license, refusals write nothing, effects
// commit with it), self-service activate (one live row per license, taken answers write nothing,
// refusals roll back), the plan's portal_offline_activation setting read with the license (findAccess,
// issue, activate), clear (conditional, once), list order, findForVerify (live rows only, by key
// hash and identifier); and on PostgreSQL 12 racing self-service activations from 3 nodes: one row.
import { afterEach, expect, test } from "bun:test";
import type { LicenseAccess } from "../../src/modules/license-api/repo";
import type { NewOfflineActivation, OfflineTokenRepo } from "../../src/modules/offline/repo";
import { AppError } from "../../src/shared/errors";
import { newId } from "../../src/shared/ids";
import { forEachEngine, type Opened } from "./harness";
import { seedCatalog, seedLicense, SEED_TIME } from "./seed";
import { repoFor } from "./repos";
import { audited, auditRows, outboxRows, pgNodes } from "./inspect";
import { event } from "../../src/modules/outbox/effects";

const later = (ms: number) => new Date(SEED_TIME.getTime() + ms);

forEachEngine("OfflineTokenRepo", (engine, open) => {
  let o: Opened;
  let repo: OfflineTokenRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).offlineTokens;
  };
  afterEach(() => o?.close());

  const row = (licenseId: string, identifier: string, at: Date) => ({
    id: newId(),
    licenseId,
    identifier,
    fingerprint: "0123456789abcdef",
    expiresAt: null,
    createdAt: at,
    createdBy: "user-1",
  });
  const accept =
    (identifier: string, at: Date, tag = "made") =>
    (cur: LicenseAccess | null): NewOfflineActivation<string> => {
      if (!cur || cur.license.status !== "active") throw new AppError("INVALID_TRANSITION");
      return { result: tag, effects: audited("offline.create", cur.license.id), activation: row(cur.license.id, identifier, at) };
    };

  test("issue: decide sees the license and plan; its effects commit; a refusal writes nothing", async () => {
    await setup();
    const { license, plan } = await seedCatalog(o, { graceDays: 4 });
    let seen: LicenseAccess | null = null;
    const out = await repo.issue(license.id, (cur) => {
      seen = cur;
      return { result: 42, effects: { ...audited("offline.issue", license.id), events: [event("license.created", SEED_TIME, { license_id: license.id, product_id: license.productId, plan_id: plan.id, status: "active", valid_until: null, support_until: null })] } };
    });
    expect(out).toBe(42);
    expect(seen!).toMatchObject({ license: { id: license.id, status: "active" }, plan: { id: plan.id, graceDays: 4 } });
    expect((await auditRows(o)).map((r) => r.action)).toEqual(["offline.issue"]);
    expect((await outboxRows(o)).map((r) => r.topic)).toEqual(["license.created"]);
    const suspended = await seedLicense(o, license.productId, plan.id, { status: "suspended" });
    await expect(
      repo.issue(suspended.id, (cur) => {
        if (cur?.license.status !== "active") throw new AppError("INVALID_TRANSITION");
        return { result: 0, effects: audited("offline.issue", suspended.id) };
      }),
    ).rejects.toMatchObject({ code: "INVALID_TRANSITION" });
    expect((await auditRows(o)).length).toBe(1);
    // An unknown license reaches decide as null.
    let missing: LicenseAccess | null | undefined;
    await repo.issue(newId(), (cur) => {
      missing = cur;
      return { result: null, effects: {} };
    });
    expect(missing).toBeNull();
  });

  test("activate: one live row per license; a second answers taken and writes nothing; a refusal rolls back", async () => {
    await setup();
    const { license, plan } = await seedCatalog(o);
    const first = await repo.activate(license.id, accept("box-1", later(0)));
    if (first.kind !== "created") throw new Error("expected created");
    expect(first.result).toBe("made");
    expect(first.activation).toMatchObject({ licenseId: license.id, identifier: "box-1", clearedAt: null, clearedBy: null, createdBy: "user-1" });
    expect(await repo.findLive(license.id)).toEqual(first.activation);
    let called = false;
    const second = await repo.activate(license.id, (cur) => {
      called = true;
      return accept("box-2", later(1))(cur);
    });
    expect(called).toBe(false);
    expect(second).toEqual({ kind: "taken", existing: first.activation });
    expect((await auditRows(o)).length).toBe(1);
    // Refused (a suspended license): no row, no audit.
    const suspended = await seedLicense(o, license.productId, plan.id, { status: "suspended" });
    await expect(repo.activate(suspended.id, accept("box-3", later(2)))).rejects.toBeInstanceOf(AppError);
    expect(await repo.findLive(suspended.id)).toBeNull();
    expect(await repo.listByLicense(suspended.id)).toEqual([]);
    expect((await auditRows(o)).length).toBe(1);
  });

  test("findAccess, issue and activate carry the plan's portal_offline_activation setting", async () => {
    await setup();
    const on = await seedCatalog(o, { graceDays: 2 });
    const off = await seedCatalog(o, { portalOfflineActivation: false });
    expect(await repo.findAccess(on.license.id)).toMatchObject({ license: { id: on.license.id }, plan: { id: on.plan.id, graceDays: 2, portalOfflineActivation: true } });
    expect(await repo.findAccess(off.license.id)).toMatchObject({ plan: { id: off.plan.id, portalOfflineActivation: false } });
    expect(await repo.findAccess(newId())).toBeNull();
    const seen: (boolean | undefined)[] = [];
    await repo.issue(off.license.id, (cur) => (seen.push(cur?.plan.portalOfflineActivation), { result: null, effects: {} }));
    await repo.activate(on.license.id, (cur) => (seen.push(cur?.plan.portalOfflineActivation), accept("box-1", later(0))(cur)));
    expect(seen).toEqual([false, true]);
  });

  test("clear: once, conditionally, with its effects; the license may then make a new one; list is newest first", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const other = await seedCatalog(o);
    const made = await repo.activate(license.id, accept("box-1", later(0)));
    if (made.kind !== "created") throw new Error("expected created");
    // Wrong license, unknown id: nothing.
    expect(await repo.clear(other.license.id, made.activation.id, later(5), "admin-1", () => audited("x", null))).toBeNull();
    expect(await repo.clear(license.id, newId(), later(5), "admin-1", () => audited("x", null))).toBeNull();
    const cleared = await repo.clear(license.id, made.activation.id, later(5), "admin-1", (a) => audited("offline.clear", a.licenseId));
    expect(cleared).toEqual({ ...made.activation, clearedAt: later(5), clearedBy: "admin-1" });
    expect(await repo.clear(license.id, made.activation.id, later(6), "admin-2", () => audited("offline.clear", null))).toBeNull();
    expect((await auditRows(o)).map((r) => r.action).filter((a) => a === "offline.clear")).toEqual(["offline.clear"]);
    expect(await repo.findLive(license.id)).toBeNull();
    const again = await repo.activate(license.id, accept("box-2", later(10)));
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
    const made = await repo.activate(license.id, accept("box-1", later(0)));
    if (made.kind !== "created") throw new Error("expected created");
    expect(await repo.findForVerify(license.keyHash, "box-1")).toMatchObject({ license: { id: license.id }, plan: { id: license.planId } });
    expect(await repo.findForVerify(license.keyHash, "box-2")).toBeNull();
    expect(await repo.findForVerify("hash-unknown", "box-1")).toBeNull();
    await repo.clear(license.id, made.activation.id, later(1), null, () => ({}));
    expect(await repo.findForVerify(license.keyHash, "box-1")).toBeNull();
  });

  test("a deleted license takes its offline activations with it", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    await repo.activate(license.id, accept("box-1", later(0)));
    if (o.sqlite) o.sqlite.sqlite.run(`DELETE FROM licenses WHERE id = '${license.id}'`);
    else await o.pg!.sql`DELETE FROM licenses WHERE id = ${license.id}`;
    expect(await repo.listByLicense(license.id)).toEqual([]);
  });

  if (engine === "postgres") {
    test("12 concurrent self-service activations of one license from 3 nodes: exactly one row", async () => {
      await setup();
      const { license } = await seedCatalog(o);
      const nodes = await pgNodes(o, 3);
      try {
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) => nodes.repos[i % 3]!.offlineTokens.activate(license.id, accept(`box-${i}`, later(i), `r${i}`))),
        );
        expect(results.filter((r) => r.kind === "created").length).toBe(1);
        expect(results.filter((r) => r.kind === "taken").length).toBe(11);
        expect((await repo.listByLicense(license.id)).length).toBe(1);
        expect((await auditRows(o)).length).toBe(1);
      } finally {
        await nodes.close();
      }
    });
  }
});
