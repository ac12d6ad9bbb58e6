// ActivationRepo on every engine: activate (limit, re-activation, check, Idempotency outcome),
// activate's lookup and deciding on it, verify's one-statement lookup and its plan cache across nodes, conditional touch, deactivate, list order, audited removal; and on
// PostgreSQL 60 activations from 3 nodes racing for 10 slots.
import { afterEach, expect, test } from "bun:test";
import type { ActivatedOutcome, Activation, ActivationRepo, NewActivation } from "../../src/modules/activations/repo";
import type { LicenseAccess } from "../../src/modules/license-api/repo";
import { ClaimLostError } from "../../src/modules/idempotency/repo";
import { AppError } from "../../src/shared/errors";
import { newId } from "../../src/shared/ids";
import { unitOf } from "./unit";
import { changeLicense } from "../../src/modules/licenses/change";
import { forEachEngine, type Opened } from "./harness";
import { insertRows, seedCatalog, seedLicense, seedPlan, SEED_TIME } from "./seed";
import { repoFor } from "./repos";
import { writerElsewhere } from "../support/writer-elsewhere";
import { audited, auditRows, claimState, completion, countRows, pgNodes, seedAddon, seedClaim } from "./inspect";

const later = (ms: number) => new Date(SEED_TIME.getTime() + ms);
const mustBeActive = (cur: LicenseAccess | null) => {
  if (!cur || cur.license.status !== "active") throw new AppError("LICENSE_INACTIVE");
};

forEachEngine("ActivationRepo", (engine, open) => {
  let o: Opened;
  let repo: ActivationRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).activations;
  };
  afterEach(() => o?.close());
  const input = (licenseId: string, identifier: string, over: Partial<NewActivation> = {}): NewActivation => ({
    licenseId,
    identifier,
    identifierType: "device",
    label: null,
    at: later(1000),
    ...over,
  });

  test("seenBefore: a repeat activation inside the last-seen interval writes nothing; a due one or a new label does", async () => {
    await setup();
    const { license } = await seedCatalog(o, { maxActivations: 2 });
    const stored = async () => (await repo.listByLicense(license.id))[0]!;
    await repo.activate(input(license.id, "dev-1", { label: "Laptop", at: later(0) }), mustBeActive);
    // 30 s later with a 60 s interval (seenBefore = at - 60 s): not due, same label → nothing written.
    for (const viaLookup of [false, true]) {
      const at = later(30_000);
      const seen = viaLookup ? ((await repo.lookup(license.keyHash, "dev-1")) ?? undefined) : undefined;
      const quiet = await repo.activate(input(license.id, "dev-1", { at, seenBefore: later(-30_000), seen }), mustBeActive);
      expect(quiet).toMatchObject({ kind: "already_activated", activation: { label: "Laptop", lastSeenAt: later(0) } });
      expect((await stored()).lastSeenAt).toEqual(later(0));
    }
    // A new label is written at once; last_seen stays until due.
    const relabeled = await repo.activate(input(license.id, "dev-1", { at: later(40_000), label: "Desk", seenBefore: later(-20_000) }), mustBeActive);
    expect(relabeled).toMatchObject({ activation: { label: "Desk", lastSeenAt: later(0) } });
    expect(await stored()).toMatchObject({ label: "Desk", lastSeenAt: later(0) });
    // Due (last seen at or before seenBefore): refreshed.
    const due = await repo.activate(input(license.id, "dev-1", { at: later(60_000), seenBefore: later(0) }), mustBeActive);
    expect(due).toMatchObject({ activation: { label: "Desk", lastSeenAt: later(60_000) } });
    expect(await stored()).toMatchObject({ label: "Desk", lastSeenAt: later(60_000) });
  });

  test("activate inserts up to max_activations; re-activation takes no slot and refreshes label and last_seen", async () => {
    await setup();
    const { license, plan } = await seedCatalog(o, { maxActivations: 2 });
    let seen: LicenseAccess | null = null;
    const first = await repo.activate(input(license.id, "dev-1", { label: "Laptop", identifierType: "user" }), (cur) => {
      seen = cur;
    });
    expect(seen!).toMatchObject({ license: { id: license.id, status: "active" }, plan: { id: plan.id, maxActivations: 2 } });
    expect(first.kind).toBe("activated");
    if (first.kind === "limit") throw new Error("unreachable");
    expect(first.activation).toEqual({
      id: first.activation.id,
      licenseId: license.id,
      identifier: "dev-1",
      identifierType: "user",
      label: "Laptop",
      createdAt: later(1000),
      lastSeenAt: later(1000),
    });
    expect(first.access).toEqual(seen!);
    const again = await repo.activate(input(license.id, "dev-1", { at: later(2000) }), mustBeActive);
    expect(again).toMatchObject({ kind: "already_activated", activation: { id: first.activation.id, label: "Laptop", lastSeenAt: later(2000), createdAt: later(1000) } });
    const relabeled = await repo.activate(input(license.id, "dev-1", { at: later(2500), label: "Desk" }), mustBeActive);
    expect(relabeled).toMatchObject({ kind: "already_activated", activation: { label: "Desk", lastSeenAt: later(2500) } });
    expect(await repo.listByLicense(license.id)).toEqual([{ ...first.activation, label: "Desk", lastSeenAt: later(2500) }]);
    expect((await repo.activate(input(license.id, "dev-2"), mustBeActive)).kind).toBe("activated");
    expect(await repo.activate(input(license.id, "dev-3"), mustBeActive)).toEqual({ kind: "limit", max: 2 });
    // At the limit, an activated identifier still re-activates.
    expect((await repo.activate(input(license.id, "dev-2", { at: later(3000) }), mustBeActive)).kind).toBe("already_activated");
    expect(await countRows(o, "activations", license.id)).toBe(2);
  });

  test("a limit refusal and a re-activation with nothing to write are answered on the lookup, while another connection holds the write lock", async () => {
    await setup();
    const { license } = await seedCatalog(o, { maxActivations: 1 });
    await repo.activate(input(license.id, "dev-1", { at: later(0) }), mustBeActive);
    const quiet = (await repo.lookup(license.keyHash, "dev-1"))!;
    const refused = (await repo.lookup(license.keyHash, "dev-2"))!;
    // Another process (SQLite) or node (PostgreSQL: a transaction holding the license row) is writing.
    const release = await writerElsewhere(
      o.sqlite ? { sqliteFile: o.sqlite.sqlite.filename } : { pg: o.pg!.sql, lockRows: (tx) => tx`SELECT id FROM licenses WHERE id = ${license.id} FOR UPDATE` },
    );
    try {
      const started = Date.now();
      const again = await repo.activate(input(license.id, "dev-1", { at: later(30_000), seenBefore: later(-30_000), seen: quiet }), mustBeActive);
      expect(again).toMatchObject({ kind: "already_activated", activation: { identifier: "dev-1", lastSeenAt: later(0) } });
      expect(await repo.activate(input(license.id, "dev-2", { at: later(30_000), seen: refused }), mustBeActive)).toEqual({ kind: "limit", max: 1 });
      // Neither waited for the lock (SQLite's busy timeout is 5 s; PostgreSQL would wait for good).
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await release();
    }
    expect(await countRows(o, "activations", license.id)).toBe(1);
  });

  test("lookup: license, grants, the identifier's activation and the count; activate decides on it, and on a license changed since it reads again", async () => {
    await setup();
    const { license, plan } = await seedCatalog(o, { maxActivations: 2 }, [{ name: "pro", valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null }]);
    expect(await repo.lookup("no-such-hash", "dev-1")).toBeNull();
    const before = await repo.lookup(license.keyHash, "dev-1");
    expect(before).toMatchObject({ access: { license: { id: license.id, status: "active" }, plan: { id: plan.id, maxActivations: 2 } }, existing: null, count: 0 });
    expect(before!.grants.map((g) => `${g.source}:${g.name}=${g.value}`)).toEqual(["plan:pro=true"]);
    const first = await repo.activate(input(license.id, "dev-1", { label: "Laptop", seen: before! }), mustBeActive);
    if (first.kind === "limit") throw new Error("expected an activation");
    expect(first.kind).toBe("activated");
    const seen1 = await repo.lookup(license.keyHash, "dev-1");
    expect(seen1).toMatchObject({ existing: first.activation, count: 1 });
    expect(await repo.lookup(license.keyHash, "dev-2")).toMatchObject({ existing: null, count: 1 });
    // Re-activation on the lookup: label kept, last_seen refreshed.
    expect(await repo.activate(input(license.id, "dev-1", { at: later(2000), seen: seen1! }), mustBeActive)).toMatchObject({
      kind: "already_activated",
      activation: { id: first.activation.id, label: "Laptop", lastSeenAt: later(2000) },
    });
    await repo.activate(input(license.id, "dev-2", { seen: (await repo.lookup(license.keyHash, "dev-2"))! }), mustBeActive);
    const full = await repo.lookup(license.keyHash, "dev-3");
    expect(full).toMatchObject({ existing: null, count: 2 });
    expect(await repo.activate(input(license.id, "dev-3", { seen: full! }), mustBeActive)).toEqual({ kind: "limit", max: 2 });
    // Suspended after the lookup: activate does not go by the stale lookup, the check sees the suspension.
    const stale = await repo.lookup(license.keyHash, "dev-1");
    await unitOf(o)((r) => changeLicense(r, license.id, () => ({ status: "suspended" }), later(3000), () => audited("license.suspend", license.id)));
    let checked: LicenseAccess | null = null;
    await expect(
      repo.activate(input(license.id, "dev-1", { at: later(4000), seen: stale! }), (cur) => {
        checked = cur;
        mustBeActive(cur);
      }),
    ).rejects.toBeInstanceOf(AppError);
    expect(checked!.license.status).toBe("suspended");
    expect((await repo.listByLicense(license.id)).find((a) => a.identifier === "dev-1")!.lastSeenAt).toEqual(later(2000));
    // Deactivated after the lookup: the re-activation the lookup suggests matches nothing; activate
    // reads again and takes a slot.
    await unitOf(o)((r) => changeLicense(r, license.id, () => ({ status: "active" }), later(5000), () => audited("license.resume", license.id)));
    const again = await repo.lookup(license.keyHash, "dev-1");
    expect(await repo.deactivate(license.id, "dev-1")).toBe(true);
    const back = await repo.activate(input(license.id, "dev-1", { at: later(6000), seen: again! }), mustBeActive);
    expect(back.kind).toBe("activated");
    expect(await countRows(o, "activations", license.id)).toBe(2);
  });

  test("activate: unlimited plans never refuse; a throwing check writes nothing", async () => {
    await setup();
    const { license, product, plan } = await seedCatalog(o, { maxActivations: null });
    for (let i = 0; i < 5; i++) expect((await repo.activate(input(license.id, `d${i}`), mustBeActive)).kind).toBe("activated");
    const revoked = await seedLicense(o, product.id, plan.id, { status: "revoked" });
    await expect(repo.activate(input(revoked.id, "d0"), mustBeActive)).rejects.toBeInstanceOf(AppError);
    let seen: LicenseAccess | null | undefined;
    await expect(repo.activate(input("nope", "d0"), (cur) => { seen = cur; mustBeActive(cur); })).rejects.toBeInstanceOf(AppError);
    expect(seen).toBeNull();
    expect(await countRows(o, "activations", revoked.id)).toBe(0);
  });

  test("activate stores the Idempotency outcome in its transaction; a lost claim undoes the activation", async () => {
    await setup();
    const { license } = await seedCatalog(o);
    const claimedAt = later(10);
    const scope = await seedClaim(o, claimedAt);
    const out = await repo.activate(input(license.id, "dev-1"), mustBeActive, (outcome) => completion(scope, claimedAt, `sealed:${outcome.kind}`));
    expect(out.kind).toBe("activated");
    expect(await claimState(o, scope)).toEqual({ state: "done", responseStatus: 200, responseSealed: "sealed:activated" });
    // Re-activation records too.
    const scope2 = await seedClaim(o, claimedAt);
    await repo.activate(input(license.id, "dev-1", { label: "x" }), mustBeActive, (outcome) => completion(scope2, claimedAt, `sealed:${outcome.kind}`));
    expect(await claimState(o, scope2)).toMatchObject({ state: "done", responseSealed: "sealed:already_activated" });
    // The claim is already done: storing again loses, the new activation rolls back.
    await expect(repo.activate(input(license.id, "dev-2"), mustBeActive, () => completion(scope, claimedAt, "again"))).rejects.toBeInstanceOf(ClaimLostError);
    await expect(repo.activate(input(license.id, "dev-1", { label: "lost" }), mustBeActive, () => completion(scope, claimedAt, "again"))).rejects.toBeInstanceOf(
      ClaimLostError,
    );
    const rows = await repo.listByLicense(license.id);
    expect(rows.map((r) => [r.identifier, r.label])).toEqual([["dev-1", "x"]]);
    expect(await claimState(o, scope)).toMatchObject({ responseSealed: "sealed:activated" });
  });

  test("findForVerify: license, plan, activation and grants (plan by name, add-ons in attach order) in one read", async () => {
    await setup();
    const validUntil = new Date("2027-03-04T05:06:07.891Z");
    const { license, plan, product } = await seedCatalog(o, { graceDays: 2, maxActivations: 4, floating: true, floatingTimeout: 15, quotaPeriod: "daily" }, [
      { name: "seats", valueType: "int", value: "5", quotaLimit: null, quotaPeriod: null },
      { name: "api", valueType: "quota", value: "", quotaLimit: 1000, quotaPeriod: "hourly" },
      { name: "Zeta", valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null },
    ]);
    await insertRows(o, "activations", [
      { id: newId(), licenseId: license.id, identifier: "dev-1", identifierType: "device", label: null, createdAt: SEED_TIME, lastSeenAt: null },
    ]);
    const found = await repo.findForVerify(license.keyHash, "dev-1");
    expect(found).toEqual({
      license: {
        id: license.id,
        productId: product.id,
        planId: plan.id,
        status: "active",
        validUntil: null,
        supportUntil: null,
        externalCustomerId: null,
        externalWorkspaceId: null,
      },
      plan: { id: plan.id, name: plan.name, graceDays: 2, maxActivations: 4, floating: true, floatingTimeout: 15, quotaPeriod: "daily" },
      activation: { id: found!.activation.id, lastSeenAt: null },
      grants: [
        { source: "plan", name: "Zeta", valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null },
        { source: "plan", name: "api", valueType: "quota", value: "", quotaLimit: 1000, quotaPeriod: "hourly" },
        { source: "plan", name: "seats", valueType: "int", value: "5", quotaLimit: null, quotaPeriod: null },
      ],
    });
    expect(await repo.findForVerify(license.keyHash, "dev-2")).toBeNull();
    expect(await repo.findForVerify("nope", "dev-1")).toBeNull();

    // A license with dates, add-ons (two attached at the same instant: add-on id breaks the tie).
    const other = await seedLicense(o, product.id, plan.id, { validUntil, supportUntil: later(86_400_000), externalCustomerId: "c", externalWorkspaceId: "w", status: "past_due" });
    const [a1, a2, a3] = [
      await seedAddon(o, product.id, { featureName: "seats", valueType: "int", value: "9" }),
      await seedAddon(o, product.id, { featureName: "extra", valueType: "quota", value: "", quotaLimit: 50, quotaPeriod: "monthly" }),
      await seedAddon(o, product.id, { featureName: "flag", valueType: "flag", value: "on" }),
    ];
    const [x, y] = [a2!.id, a3!.id].sort() as [string, string];
    await insertRows(o, "licenseAddons", [
      { licenseId: other.id, addonId: y, createdAt: later(500) },
      { licenseId: other.id, addonId: a1!.id, createdAt: later(900) },
      { licenseId: other.id, addonId: x, createdAt: later(500) },
    ]);
    await insertRows(o, "activations", [
      { id: newId(), licenseId: other.id, identifier: "dev-1", identifierType: "user", label: "L", createdAt: SEED_TIME, lastSeenAt: later(1234) },
    ]);
    const withAddons = await repo.findForVerify(other.keyHash, "dev-1");
    expect(withAddons!.license).toEqual({
      id: other.id,
      productId: product.id,
      planId: plan.id,
      status: "past_due",
      validUntil,
      supportUntil: later(86_400_000),
      externalCustomerId: "c",
      externalWorkspaceId: "w",
    });
    expect(withAddons!.activation.lastSeenAt).toEqual(later(1234));
    const byId = new Map([a1!, a2!, a3!].map((a) => [a.id, a]));
    const addonGrant = (id: string) => {
      const a = byId.get(id)!;
      return { source: "addon" as const, name: a.featureName, valueType: a.valueType, value: a.value, quotaLimit: a.quotaLimit, quotaPeriod: a.quotaPeriod };
    };
    expect(withAddons!.grants.slice(3)).toEqual([addonGrant(x), addonGrant(y), addonGrant(a1!.id)]);
    // The same grants EntitlementRepo.grants returns.
    expect(await repoFor(o).entitlements.grants(plan.id, other.id)).toEqual([...withAddons!.grants]);
  });

  test("findForVerify's plan and features follow every plan write made through another node (catalog generation)", async () => {
    await setup();
    const { plan, license } = await seedCatalog(o, { name: "Basic", graceDays: 1 }, [{ name: "a", valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null }]);
    await insertRows(o, "activations", [{ id: newId(), licenseId: license.id, identifier: "d", identifierType: "device", label: null, createdAt: SEED_TIME, lastSeenAt: null }]);
    // A second node: its own repositories and caches on the same database, written through units of
    // work as the plan verbs write (plan writes run only in one).
    const otherUnit = unitOf(o);
    const seen = async () => {
      const found = (await repo.findForVerify(license.keyHash, "d"))!;
      return { name: found.plan.name, graceDays: found.plan.graceDays, features: found.grants.map((g) => `${g.name}=${g.value}`) };
    };
    expect(await seen()).toEqual({ name: "Basic", graceDays: 1, features: ["a=true"] });
    // A row written behind the repositories' back bumps nothing: this node keeps serving its copy,
    // which shows that the reads below come from the cache unless the generation moved.
    await insertRows(o, "planFeatures", [{ id: newId(), planId: plan.id, name: "b", valueType: "string", value: "raw", quotaLimit: null, quotaPeriod: null, createdAt: SEED_TIME }]);
    expect(await seen()).toEqual({ name: "Basic", graceDays: 1, features: ["a=true"] });
    const feature = (name: string, value: string) => ({ id: newId(), planId: plan.id, name, valueType: "string" as const, value, quotaLimit: null, quotaPeriod: null, stripeMeter: null, createdAt: SEED_TIME });
    await otherUnit((r) => r.plans.upsertFeature(feature("c", "1")));
    expect(await seen()).toEqual({ name: "Basic", graceDays: 1, features: ["a=true", "b=raw", "c=1"] });
    await otherUnit((r) => r.plans.update(plan.id, { name: "Pro", graceDays: 7 }, later(5000)));
    expect(await seen()).toEqual({ name: "Pro", graceDays: 7, features: ["a=true", "b=raw", "c=1"] });
    await otherUnit((r) => r.plans.deleteFeature(plan.id, "a"));
    expect(await seen()).toEqual({ name: "Pro", graceDays: 7, features: ["b=raw", "c=1"] });
    // Deleting another plan moves the generation too; this plan's data is reloaded, unchanged.
    const { plan: spare } = await seedPlan(o, plan.productId);
    expect(await otherUnit((r) => r.plans.delete(spare.id))).toMatchObject({ id: spare.id });
    expect(await seen()).toEqual({ name: "Pro", graceDays: 7, features: ["b=raw", "c=1"] });
  });

  /** An activation never seen (last_seen_at null) on a fresh license, and a reader of its last_seen_at. */
  const neverSeenActivation = async () => {
    const { license } = await seedCatalog(o);
    const id = newId();
    await insertRows(o, "activations", [{ id, licenseId: license.id, identifier: "d", identifierType: "device", label: null, createdAt: SEED_TIME, lastSeenAt: null }]);
    return { id, seen: async () => (await repo.listByLicense(license.id))[0]!.lastSeenAt };
  };

  test("touch sets last_seen_at only when unset or not after notSeenSince", async () => {
    await setup();
    const { id, seen } = await neverSeenActivation();
    await repo.touch(id, later(5000), later(0));
    expect(await seen()).toEqual(later(5000));
    // Touched after notSeenSince by another node: unchanged.
    await repo.touch(id, later(6000), later(4999));
    expect(await seen()).toEqual(later(5000));
    // Exactly at notSeenSince: updated.
    await repo.touch(id, later(7000), later(5000));
    expect(await seen()).toEqual(later(7000));
    await repo.touch("nope", later(8000), later(9000));
    expect(await seen()).toEqual(later(7000));
  });

  test("touch does not wait for a writer elsewhere: skipped while the lock is held, written once it is free", async () => {
    await setup();
    const { id, seen } = await neverSeenActivation();
    // Another process (SQLite) or node (PostgreSQL: a transaction holding the activation's row) is writing.
    const release = await writerElsewhere(
      o.sqlite ? { sqliteFile: o.sqlite.sqlite.filename } : { pg: o.pg!.sql, lockRows: (tx) => tx`SELECT id FROM activations WHERE id = ${id} FOR UPDATE` },
    );
    try {
      const started = Date.now();
      await repo.touch(id, later(5000), later(0));
      // Neither waited (SQLite's busy timeout is 5 s and then fails; PostgreSQL would wait for good).
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await release();
    }
    expect(await seen()).toBeNull();
    await repo.touch(id, later(6000), later(0));
    expect(await seen()).toEqual(later(6000));
    // The connection waits for ordinary writes again (SQLite: busy_timeout restored after the touch).
    if (o.sqlite) expect(o.sqlite.sqlite.query("PRAGMA busy_timeout").get()).toEqual({ timeout: 5000 });
  });

  test("effects: activate sees both outcomes, deactivate the removed row; a throwing callback undoes the change", async () => {
    await setup();
    const { license } = await seedCatalog(o, { maxActivations: 5 });
    const kinds: string[] = [];
    const track = (oc: ActivatedOutcome) => (kinds.push(oc.kind), audited(`activate.${oc.kind}`, oc.activation.id));
    const first = await repo.activate(input(license.id, "dev-1"), mustBeActive, undefined, track);
    await repo.activate(input(license.id, "dev-1", { at: later(10) }), mustBeActive, undefined, track);
    expect(kinds).toEqual(["activated", "already_activated"]);
    await expect(repo.activate(input(license.id, "dev-2"), mustBeActive, undefined, () => { throw new Error("refused"); })).rejects.toThrow("refused");
    expect((await repo.listByLicense(license.id)).map((a) => a.identifier)).toEqual(["dev-1"]);

    await expect(repo.deactivate(license.id, "dev-1", () => { throw new Error("refused"); })).rejects.toThrow("refused");
    expect((await repo.listByLicense(license.id)).length).toBe(1);
    let removed: Activation | null = null;
    expect(await repo.deactivate(license.id, "dev-1", (a) => ((removed = a), audited("deactivate", a.id)))).toBe(true);
    if (first.kind === "limit") throw new Error("expected an activation");
    expect(removed!).toEqual({ ...first.activation, lastSeenAt: later(10) });
    expect(await repo.deactivate(license.id, "dev-1", () => { throw new Error("not called"); })).toBe(false);
    expect((await auditRows(o)).map((r) => r.action)).toEqual(["activate.activated", "activate.already_activated", "deactivate"]);
  });

  test("deactivate, listByLicense order, and audited remove", async () => {
    await setup();
    const { license, product, plan } = await seedCatalog(o);
    const other = await seedLicense(o, product.id, plan.id);
    const ids = [newId(), newId(), newId()].sort();
    const row = (id: string, identifier: string, createdAt: Date, licenseId = license.id) => ({
      id,
      licenseId,
      identifier,
      identifierType: "device" as const,
      label: null,
      createdAt,
      lastSeenAt: null,
    });
    // created_at first, then id: c (t=1, smallest id), b (t=1, larger id) ... a (t=2).
    await insertRows(o, "activations", [row(ids[2]!, "a", later(2)), row(ids[1]!, "b", later(1)), row(ids[0]!, "c", later(1)), row(newId(), "a", later(0), other.id)]);
    expect((await repo.listByLicense(license.id)).map((a) => a.identifier)).toEqual(["c", "b", "a"]);
    expect(await repo.listByLicense("nope")).toEqual([]);

    expect(await repo.deactivate(license.id, "b")).toBe(true);
    expect(await repo.deactivate(license.id, "b")).toBe(false);
    expect(await repo.deactivate(license.id, "zz")).toBe(false);
    expect((await repo.listByLicense(license.id)).map((a) => a.identifier)).toEqual(["c", "a"]);
    expect(await countRows(o, "activations", other.id)).toBe(1);

    // Removal: only from the named license, with its audit row.
    expect(await repo.remove(other.id, ids[2]!, () => audited("activation.remove", ids[2]!))).toBeNull();
    const removed = await repo.remove(license.id, ids[2]!, (r) => audited("activation.remove", r.id, { identifier: r.identifier }));
    expect(removed).toEqual(row(ids[2]!, "a", later(2)));
    expect(await auditRows(o)).toEqual([{ action: "activation.remove", entityId: ids[2]!, changes: { identifier: "a" } }]);
    expect(await repo.remove(license.id, ids[2]!, () => audited("activation.remove", null))).toBeNull();
    // A throwing audit callback keeps the activation.
    await expect(repo.remove(license.id, ids[0]!, () => { throw new Error("no audit"); })).rejects.toThrow("no audit");
    expect((await repo.listByLicense(license.id)).map((a) => a.identifier)).toEqual(["c"]);
    expect((await auditRows(o)).length).toBe(1);
  });

  if (engine === "postgres") {
    test("60 concurrent activations of distinct identifiers from 3 nodes against max 10: exactly 10", async () => {
      await setup();
      const { license } = await seedCatalog(o, { maxActivations: 10 });
      const nodes = await pgNodes(o, 3);
      try {
        const results = await Promise.all(
          Array.from({ length: 60 }, (_, i) => nodes.repos[i % 3]!.activations.activate(input(license.id, `dev-${i}`, { at: later(i) }), mustBeActive)),
        );
        expect(results.filter((r) => r.kind === "activated").length).toBe(10);
        expect(results.filter((r) => r.kind === "limit").length).toBe(50);
        expect(await countRows(o, "activations", license.id)).toBe(10);
      } finally {
        await nodes.close();
      }
    });

    test("30 concurrent activations of one identifier from 3 nodes: one activation, the rest re-activate", async () => {
      await setup();
      const { license } = await seedCatalog(o, { maxActivations: 1 });
      const nodes = await pgNodes(o, 3);
      try {
        const results = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            // Side effects only for the call that inserted (as the activation.created event is).
            nodes.repos[i % 3]!.activations.activate(input(license.id, "same", { at: later(i) }), mustBeActive, undefined, (oc) =>
              oc.kind === "activated" ? audited("activation.created", oc.activation.id) : {},
            ),
          ),
        );
        expect(results.filter((r) => r.kind === "activated").length).toBe(1);
        expect(results.filter((r) => r.kind === "already_activated").length).toBe(29);
        expect((await auditRows(o)).map((r) => r.action)).toEqual(["activation.created"]);
        expect(await countRows(o, "activations", license.id)).toBe(1);
      } finally {
        await nodes.close();
      }
    });
  }
});
