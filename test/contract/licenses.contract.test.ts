// LicenseRepo on every engine, through the verbs' units of work (licenses/change.ts createLicense,
// changeLicense): issue, reads, admin list (filters, search, cursor), changes (incl. revoke's
// clearActivations), add-on links; and on PostgreSQL changes racing from 3 nodes, and a revoke
// racing activations on 3 nodes.
import { afterEach, expect, test } from "bun:test";
import type { License, LicenseListFilter, LicenseRepo } from "../../src/modules/licenses/repo";
import type { LicenseAccess } from "../../src/modules/license-api/repo";
import { AppError } from "../../src/shared/errors";
import { newId } from "../../src/shared/ids";
import { forEachEngine, type Opened } from "./harness";
import { insertRows, seedCatalog, seedLicense, seedPlan, seedProduct, SEED_TIME } from "./seed";
import { repoFor } from "./repos";
import { audited, auditRows, countRows, pgNodes, seedAddon } from "./inspect";
import { unitOf, unitOn, withPgUnits, type Unit } from "./unit";
import { changeLicense, createLicense } from "../../src/modules/licenses/change";
import { DAY } from "../../src/shared/clock";
import type { Effects } from "../../src/modules/outbox/effects";
import type { LicensePatch } from "../../src/modules/licenses/repo";

const later = (ms: number) => new Date(SEED_TIME.getTime() + ms);

/** A License value (not written) for create(). */
function newLicense(productId: string, planId: string, over: Partial<License> = {}): License {
  const id = newId();
  return {
    id,
    productId,
    planId,
    keyHash: `hash-${id}`,
    keyEncrypted: `sealed-${id}`,
    keyHint: "WXYZ",
    email: "buyer@example.com",
    status: "active",
    priorStatus: null,
    validUntil: new Date("2027-01-02T03:04:05.678Z"),
    supportUntil: null,
    pastDueSince: null,
    externalCustomerId: "cus_1",
    externalWorkspaceId: null,
    createdAt: SEED_TIME,
    updatedAt: SEED_TIME,
    ...over,
  };
}

async function expectAppError(p: Promise<unknown>, code: string, message?: string) {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(AppError);
  expect((e as AppError).code).toBe(code as AppError["code"]);
  if (message) expect((e as AppError).message).toBe(message);
}

forEachEngine("LicenseRepo", (engine, open) => {
  let o: Opened;
  let repo: LicenseRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).licenses;
  };
  afterEach(() => o?.close());
  // A license change as the verbs make it (licenses/change.ts): one unit of work on `unit` (this
  // database's own connection by default) that locks, decides, writes and records the effects.
  const mutate = (
    id: string,
    decide: (current: License) => LicensePatch,
    at: Date,
    effects: (before: License, patch: LicensePatch) => Effects,
    opts: { clearActivations?: boolean } = {},
    unit: Unit = unitOf(o),
  ) => unit((r) => changeLicense(r, id, decide, at, effects, opts));
  // An issue as the verbs make it: the row, its add-ons and the effects in one unit of work.
  const issue = (license: License, addonIds: string[], effects: Effects, unit: Unit = unitOf(o)) => unit((r) => createLicense(r, license, addonIds, effects));

  test("an issue stores the license, its add-ons and the audit row; reads by id and key hash", async () => {
    await setup();
    const product = await seedProduct(o);
    const { plan } = await seedPlan(o, product.id);
    const a1 = await seedAddon(o, product.id);
    const a2 = await seedAddon(o, product.id);
    const lic = newLicense(product.id, plan.id);
    expect(await issue(lic, [a2.id, a1.id], audited("license.issue", lic.id, { email: lic.email }))).toEqual(lic);
    expect(await repo.findById(lic.id)).toEqual(lic);
    expect(await repo.findByKeyHash(lic.keyHash)).toEqual(lic);
    expect(await repo.findById("nope")).toBeNull();
    expect(await repo.findByKeyHash("nope")).toBeNull();
    // Add-on id order (SQLite reads them off the primary-key index).
    expect(await repo.addonIds(lic.id)).toEqual([a1.id, a2.id].sort());
    expect(await repo.addonIds("nope")).toEqual([]);
    expect(await auditRows(o)).toEqual([{ action: "license.issue", entityId: lic.id, changes: { email: lic.email } }]);
  });

  // The key goes to a caller that will not ask again: the issue's unit of work commits durably. The
  // verbs ask for it (test/http/admin/licenses.test.ts: DataStore.transaction's `durable`); what a
  // durable unit does on each engine is test/db/durable.test.ts (SQLite: the syncs of an issue through
  // the admin API, counted; PostgreSQL: synchronous_commit on where the database turns it off).

  test("an issue refuses a duplicate key hash, an unknown plan or add-on with CONFLICT and writes nothing", async () => {
    await setup();
    const { product, plan, license } = await seedCatalog(o);
    await expectAppError(
      issue(newLicense(product.id, plan.id, { keyHash: license.keyHash }), [], audited("license.issue", null)),
      "CONFLICT",
      "License key collision; retry.",
    );
    await expectAppError(issue(newLicense(product.id, "no-plan"), [], audited("license.issue", null)), "CONFLICT", "Unknown product, plan or add-on.");
    const orphan = newLicense(product.id, plan.id);
    await expectAppError(issue(orphan, ["no-addon"], audited("license.issue", null)), "CONFLICT", "Unknown product, plan or add-on.");
    expect(await repo.findById(orphan.id)).toBeNull();
    expect(await countRows(o, "licenses")).toBe(1);
    expect(await auditRows(o)).toEqual([]);
  });

  test("list filters, searches and pages newest first by (created_at, id)", async () => {
    await setup();
    const product = await seedProduct(o);
    const other = await seedProduct(o);
    const { plan } = await seedPlan(o, product.id);
    const { plan: plan2 } = await seedPlan(o, product.id);
    const { plan: otherPlan } = await seedPlan(o, other.id);
    const l1 = await seedLicense(o, product.id, plan.id, { email: "Alice.Smith@Example.com", createdAt: later(1000), externalCustomerId: "cus_A" });
    const l2 = await seedLicense(o, product.id, plan2.id, { email: "bob_b@example.com", createdAt: later(2000), status: "revoked", externalWorkspaceId: "ws_9" });
    const l3 = await seedLicense(o, other.id, otherPlan.id, { email: "ÉLODIE@exemple.fr", createdAt: later(2000) });
    const l4 = await seedLicense(o, product.id, plan.id, { email: "bobxb@example.com", createdAt: later(3000) });
    const ids = (r: { items: License[] }) => r.items.map((l) => l.id);
    const list = (f: Omit<LicenseListFilter, "limit">) => repo.list({ limit: 50, ...f });
    const sameTime = [l2.id, l3.id].sort().reverse();

    expect(ids(await list({}))).toEqual([l4.id, ...sameTime, l1.id]);
    expect((await list({})).items[0]).toEqual(l4);
    expect(ids(await list({ productId: product.id }))).toEqual([l4.id, l2.id, l1.id]);
    expect(ids(await list({ planId: plan.id }))).toEqual([l4.id, l1.id]);
    expect(ids(await list({ status: "revoked" }))).toEqual([l2.id]);
    expect(ids(await list({ externalCustomerId: "cus_A" }))).toEqual([l1.id]);
    expect(ids(await list({ externalWorkspaceId: "ws_9" }))).toEqual([l2.id]);
    expect(ids(await list({ email: "alice.smith@EXAMPLE.com" }))).toEqual([l1.id]);
    expect(ids(await list({ email: "alice" }))).toEqual([]);
    // Exact id / key hash / key hint; email prefix and domain (the service maps `search` onto these:
    // license-search.contract.test.ts covers every branch and its plan).
    expect(ids(await list({ id: l3.id }))).toEqual([l3.id]);
    expect(ids(await list({ keyHash: l4.keyHash }))).toEqual([l4.id]);
    expect(ids(await list({ keyHash: l4.keyHash, productId: other.id }))).toEqual([]);
    expect(ids(await list({ emailPrefix: "BOB" }))).toEqual([l2.id, l4.id]);
    expect(ids(await list({ emailPrefix: "bob_" }))).toEqual([l2.id]);
    expect(ids(await list({ emailPrefix: "%" }))).toEqual([]);
    expect(ids(await list({ emailDomain: "EXAMPLE.com" }))).toEqual([l4.id, l2.id, l1.id]);
    // Case folding is ASCII-only, as SQLite's lower(): "É" is not folded in the stored email.
    expect(ids(await list({ emailPrefix: "ÉLODIE@EXEMPLE" }))).toEqual([l3.id]);
    expect(ids(await list({ emailPrefix: "élodie" }))).toEqual([]);
    expect(ids(await list({ email: "élodie@exemple.fr" }))).toEqual([]);
    expect(ids(await list({ email: "ÉLODIE@EXEMPLE.FR" }))).toEqual([l3.id]);

    // Pages of 1 through the (created_at, id) tie.
    const seen: string[] = [];
    let cursor: LicenseListFilter["cursor"];
    for (;;) {
      const page = await repo.list({ limit: 1, cursor });
      seen.push(...ids(page));
      if (!page.hasMore) break;
      const last = page.items[page.items.length - 1]!;
      cursor = { t: last.createdAt.getTime(), id: last.id };
    }
    expect(seen).toEqual([l4.id, ...sameTime, l1.id]);
    const two = await repo.list({ limit: 2 });
    expect(two.hasMore).toBe(true);
    expect(await repo.list({ limit: 4 })).toMatchObject({ hasMore: false });
  });

  test("a change (lock, decide, update, effects in one unit) applies the patch with its audit row; unknown is null; a refusal writes nothing", async () => {
    await setup();
    const { license, product } = await seedCatalog(o);
    const { plan: plan2 } = await seedPlan(o, product.id);
    let seen: License | null = null;
    const at = later(60_000);
    const out = await mutate(
      license.id,
      (cur) => {
        seen = cur;
        return { status: "suspended", priorStatus: cur.status, planId: plan2.id, validUntil: new Date("2028-05-06T07:08:09.123Z") };
      },
      at,
      (before, patch) => audited("license.update", before.id, { from: before.status, to: patch.status }),
    );
    expect(seen!).toEqual(license);
    const expected = { ...license, status: "suspended", priorStatus: "active", planId: plan2.id, validUntil: new Date("2028-05-06T07:08:09.123Z"), updatedAt: at };
    expect(out!).toEqual(expected as License);
    expect(await repo.findById(license.id)).toEqual(expected as License);
    expect(await auditRows(o)).toEqual([{ action: "license.update", entityId: license.id, changes: { from: "active", to: "suspended" } }]);

    let called = false;
    const none = await mutate("nope", () => ((called = true), {}), at, () => audited("x", null));
    expect(none).toBeNull();
    expect(called).toBe(false);

    await expectAppError(
      mutate(license.id, () => { throw new AppError("CONFLICT", { message: "no" }); }, later(1), () => audited("y", null)),
      "CONFLICT",
      "no",
    );
    // A throwing audit callback rolls the update back too.
    await expect(mutate(license.id, () => ({ status: "active" }), later(2), () => { throw new Error("audit failed"); })).rejects.toThrow("audit failed");
    expect(await repo.findById(license.id)).toEqual(expected as License);
    expect((await auditRows(o)).length).toBe(1);

    await expectAppError(mutate(license.id, () => ({ planId: "gone-plan" }), later(3), () => audited("z", null)), "CONFLICT", "The plan no longer exists.");
    expect(await repo.findById(license.id)).toEqual(expected as License);

    // An empty patch (a caller that only wanted the row's lock) leaves the row as it was, updated_at
    // included; its effects are still written.
    expect(await mutate(license.id, () => ({}), later(4), () => audited("lock", license.id))).toEqual(expected as License);
    expect(await repo.findById(license.id)).toEqual(expected as License);
    expect((await auditRows(o)).map((r) => r.action)).toEqual(["license.update", "lock"]);
  });

  test("lock returns the row as it is and writes nothing; an unknown id is null", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const before = await repo.findById(license.id);
    expect(await repo.lock(license.id)).toEqual(before);
    expect(await repo.lock("nope")).toBeNull();
    expect(await repo.findById(license.id)).toEqual(before);
    expect(await auditRows(o)).toEqual([]);
  });

  if (engine === "postgres") {
    test("lock holds the row until its transaction ends: a writer on another connection waits for it", async () => {
      await setup();
      const { license } = await seedCatalog(o);
      const order: string[] = [];
      const nodes = await pgNodes(o, 1);
      try {
        let locked!: () => void;
        const isLocked = new Promise<void>((r) => (locked = r));
        const holder = unitOf(o)(async (r) => {
          expect((await r.licenses.lock(license.id))?.id).toBe(license.id);
          order.push("locked");
          locked();
          await Bun.sleep(300);
          order.push("released");
        });
        await isLocked;
        const writer = mutate(license.id, () => ({ email: "after@example.com" }), later(1), () => audited("license.update", license.id), {}, unitOn({ pg: nodes.handles[0]! })).then(() =>
          order.push("written"),
        );
        await Promise.all([holder, writer]);
        expect(order).toEqual(["locked", "released", "written"]);
        expect((await repo.findById(license.id))!.email).toBe("after@example.com");
      } finally {
        await nodes.close();
      }
    });
  }

  // SQLite runs the units one at a time (one gate, as the requests of one process); on PostgreSQL three
  // nodes' units interleave, and only the row lock (changeLicense's lock) makes each decide on the
  // row its predecessor committed: without it two read the same expiry and one extension is lost.
  test("12 concurrent changes (PostgreSQL: from 3 nodes), each deciding on the row it locked: none is lost", async () => {
    await setup();
    const start = new Date("2027-01-01T00:00:00.000Z");
    const { license } = await seedCatalog(o);
    await mutate(license.id, () => ({ validUntil: start }), later(0), () => ({}));
    const seen: number[] = [];
    const race = (units: Unit[]) =>
      Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          mutate(
            license.id,
            (cur) => {
              seen.push(cur.validUntil!.getTime());
              return { validUntil: new Date(cur.validUntil!.getTime() + DAY) };
            },
            later(i + 1),
            (before) => audited("license.set_valid_until", before.id),
            {},
            units[i % units.length],
          ),
        ),
      );
    if (engine === "postgres") await withPgUnits(o, 3, race);
    else await race([unitOf(o)]);
    expect((await repo.findById(license.id))!.validUntil).toEqual(new Date(start.getTime() + 12 * DAY));
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => start.getTime() + i * DAY));
    expect((await auditRows(o)).length).toBe(12);
  });

  test("update with clearActivations drops that license's activations and floating sessions only", async () => {
    await setup();
    const { license, product, plan } = await seedCatalog(o);
    const other = await seedLicense(o, product.id, plan.id);
    const act = (licenseId: string, identifier: string) => ({ id: newId(), licenseId, identifier, identifierType: "device", label: null, createdAt: SEED_TIME, lastSeenAt: null });
    const sess = (licenseId: string, identifier: string) => ({ id: newId(), licenseId, identifier, label: null, createdAt: SEED_TIME, heartbeatAt: SEED_TIME, expiresAt: later(3_600_000) });
    await insertRows(o, "activations", [act(license.id, "a"), act(license.id, "b"), act(other.id, "a")]);
    await insertRows(o, "floatingSessions", [sess(license.id, "a"), sess(other.id, "a")]);
    // Without the option nothing is dropped.
    await mutate(license.id, () => ({ email: "new@example.com" }), later(1), () => audited("license.update", license.id));
    expect(await countRows(o, "activations", license.id)).toBe(2);
    const revoked = await mutate(license.id, () => ({ status: "revoked" }), later(2), () => audited("license.revoke", license.id), { clearActivations: true });
    expect(revoked!.status).toBe("revoked");
    expect(revoked!.email).toBe("new@example.com");
    expect(await countRows(o, "activations", license.id)).toBe(0);
    expect(await countRows(o, "floatingSessions", license.id)).toBe(0);
    expect(await countRows(o, "activations", other.id)).toBe(1);
    expect(await countRows(o, "floatingSessions", other.id)).toBe(1);
    // A refused revoke keeps them.
    await insertRows(o, "activations", [act(other.id, "b")]);
    await expect(
      mutate(other.id, () => { throw new AppError("FORBIDDEN"); }, later(3), () => audited("license.revoke", other.id), { clearActivations: true }),
    ).rejects.toBeInstanceOf(AppError);
    expect(await countRows(o, "activations", other.id)).toBe(2);
  });

  test("attachAddon / detachAddon: idempotent rows (true only when something changed); a gone add-on is CONFLICT", async () => {
    await setup();
    const { license, product } = await seedCatalog(o);
    const addon = await seedAddon(o, product.id);
    expect(await repo.attachAddon(license.id, addon.id, later(5000))).toBe(true);
    expect(await repo.attachAddon(license.id, addon.id, later(6000))).toBe(false);
    expect(await repo.addonIds(license.id)).toEqual([addon.id]);
    await expectAppError(unitOf(o)((r) => r.licenses.attachAddon(license.id, "gone-addon", later(5000))), "CONFLICT", "The add-on no longer exists.");
    expect(await repo.addonIds(license.id)).toEqual([addon.id]);
    expect(await repo.detachAddon(license.id, addon.id)).toBe(true);
    expect(await repo.detachAddon(license.id, addon.id)).toBe(false);
    expect(await repo.detachAddon("nope", addon.id)).toBe(false);
    expect(await repo.addonIds(license.id)).toEqual([]);
    // Rows only: the verbs (licenses/service.ts) write the audit rows.
    expect(await auditRows(o)).toEqual([]);
  });

  if (engine === "postgres") {
    test("a revoke racing activations on 3 nodes leaves no activation behind", async () => {
      await setup();
      const { license } = await seedCatalog(o, { maxActivations: null });
      // Three nodes activate; a fourth (with its own pool, so it does not queue behind them) revokes.
      const nodes = await pgNodes(o, 4);
      try {
        const mustBeActive = (cur: LicenseAccess | null) => {
          if (!cur || cur.license.status !== "active") throw new AppError("LICENSE_INACTIVE");
        };
        const activate = (i: number) =>
          nodes.repos[i % 3]!.activations.activate(
            { licenseId: license.id, identifier: `dev-${i}`, identifierType: "device", label: null, at: later(i) },
            mustBeActive,
          );
        const before = Array.from({ length: 20 }, (_, i) => activate(i));
        // Let some activations commit first, then revoke while the others are still running or queued.
        await Promise.all(before.slice(0, 5));
        const revoke = mutate(license.id, () => ({ status: "revoked" }), later(100), () => audited("license.revoke", license.id), { clearActivations: true }, unitOn({ pg: nodes.handles[3]! }));
        const after = Array.from({ length: 25 }, (_, i) => activate(20 + i));
        const activations = [...before, ...after];
        const results = await Promise.allSettled([revoke, ...activations]);
        expect(results[0]!.status).toBe("fulfilled");
        const acts = results.slice(1);
        const refused = acts.filter((r) => r.status === "rejected");
        for (const r of refused) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(AppError);
        expect(acts.filter((r) => r.status === "fulfilled").length).toBeGreaterThanOrEqual(5);
        // Activations that committed before the revoke were dropped by it; later ones were refused.
        expect(await countRows(o, "activations", license.id)).toBe(0);
        expect((await repo.findById(license.id))!.status).toBe("revoked");
      } finally {
        await nodes.close();
      }
    });
  }
});
