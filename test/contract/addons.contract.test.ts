// AddonRepo on every engine: CRUD with audit rows in the same transaction, the locked
// read-decide-write of update, constraint conflicts, attach order of forLicense.
import { afterEach, expect, test } from "bun:test";
import type { Addon, AddonRepo } from "../../src/modules/addons/repo";
import { forEachEngine, type Opened } from "./harness";
import { SEED_TIME, insertRows, seedCatalog, seedProduct } from "./seed";
import { repoFor } from "./repos";
import { AT, auditActions, audited, rejection } from "./rows";
import { withNodes } from "./nodes";

function addon(productId: string, over: Partial<Addon> = {}): Addon {
  return {
    id: crypto.randomUUID(),
    productId,
    name: `Extra ${crypto.randomUUID().slice(0, 6)}`,
    featureName: "exports",
    valueType: "quota",
    value: "100",
    quotaLimit: 100,
    quotaPeriod: "monthly",
    createdAt: SEED_TIME,
    updatedAt: SEED_TIME,
    ...over,
  };
}

async function seedAddon(o: Opened, productId: string, over: Partial<Addon> = {}): Promise<Addon> {
  const a = addon(productId, over);
  await insertRows(o, "addons", [a as unknown as Record<string, unknown>]);
  return a;
}

const boom = () => {
  throw new Error("refused");
};

forEachEngine("AddonRepo", (engine, open) => {
  let o: Opened;
  let repo: AddonRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).addons;
  };
  afterEach(() => o?.close());

  test("create stores the add-on with its audit row; findById; null for unknown", async () => {
    await setup();
    const product = await seedProduct(o);
    const a = addon(product.id, { quotaLimit: 6_000_000_000, value: "6000000000", quotaPeriod: null });
    expect(await repo.create(a, audited("addon.create"))).toEqual(a);
    expect(await repo.findById(a.id)).toEqual(a);
    expect(await repo.findById("nope")).toBeNull();
    expect(await auditActions(o)).toEqual(["addon.create"]);
  });

  test("create refuses a duplicate name and an unknown product with CONFLICT, writing nothing", async () => {
    await setup();
    const product = await seedProduct(o);
    const first = await seedAddon(o, product.id, { name: "Exports" });
    const dup = await rejection(repo.create(addon(product.id, { name: "Exports" }), audited("addon.create")));
    expect(dup).toEqual({ code: "CONFLICT", message: 'The product already has an add-on named "Exports".' });
    const fk = await rejection(repo.create(addon("no-such-product"), audited("addon.create")));
    expect(fk).toEqual({ code: "CONFLICT", message: "Unknown product." });
    expect(await repo.list({})).toEqual([first]);
    expect(await auditActions(o)).toEqual([]);
  });

  test("list orders by creation time then id in byte order, and filters by product", async () => {
    await setup();
    const a = await seedProduct(o);
    const b = await seedProduct(o);
    for (const id of ["aa", "Zed", "a-b"]) await seedAddon(o, a.id, { id });
    await seedAddon(o, b.id, { id: "0", createdAt: new Date(SEED_TIME.getTime() + 1) });
    expect((await repo.list({})).map((x) => x.id)).toEqual(["Zed", "a-b", "aa", "0"]);
    expect((await repo.list({ productId: b.id })).map((x) => x.id)).toEqual(["0"]);
    expect(await repo.list({ productId: "nope" })).toEqual([]);
  });

  test("update applies what decide returns for the current row and audits before/after; null for unknown", async () => {
    await setup();
    const product = await seedProduct(o);
    const a = await seedAddon(o, product.id);
    const seen: unknown[] = [];
    const updated = await repo.update(
      a.id,
      (current) => {
        seen.push(current);
        return { name: "Renamed", valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null };
      },
      AT,
      (before, after) => {
        seen.push([before, after]);
        return audited("addon.update");
      },
    );
    const expected: Addon = { ...a, name: "Renamed", valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null, updatedAt: AT };
    expect(updated).toEqual(expected);
    expect(seen).toEqual([a, [a, expected]]);
    let decided = false;
    const none = await repo.update(
      "nope",
      () => {
        decided = true;
        return {};
      },
      AT,
      () => audited("addon.update"),
    );
    expect(none).toBeNull();
    expect(decided).toBe(false);
    expect(await auditActions(o)).toEqual(["addon.update"]);
  });

  test("update refusals: decide or audit throwing, or a taken name (CONFLICT), change nothing", async () => {
    await setup();
    const product = await seedProduct(o);
    await seedAddon(o, product.id, { name: "Taken" });
    const a = await seedAddon(o, product.id);
    expect(await rejection(repo.update(a.id, boom, AT, () => audited("addon.update")))).toEqual({ code: "(no code)", message: "refused" });
    expect(await rejection(repo.update(a.id, () => ({ name: "Other" }), AT, boom))).toEqual({ code: "(no code)", message: "refused" });
    const err = await rejection(repo.update(a.id, () => ({ name: "Taken" }), AT, () => audited("addon.update")));
    expect(err).toEqual({ code: "CONFLICT", message: "The product already has an add-on with this name." });
    expect(await repo.findById(a.id)).toEqual(a);
    expect(await auditActions(o)).toEqual([]);
  });

  test("delete removes and audits; false for unknown; CONFLICT while attached; a throwing audit keeps it", async () => {
    await setup();
    const { product, license } = await seedCatalog(o);
    const gone = await seedAddon(o, product.id);
    const attached = await seedAddon(o, product.id);
    await insertRows(o, "licenseAddons", [{ licenseId: license.id, addonId: attached.id, createdAt: SEED_TIME }]);
    expect(await rejection(repo.delete(gone.id, boom))).toEqual({ code: "(no code)", message: "refused" });
    expect(await repo.findById(gone.id)).toEqual(gone);
    let before: Addon | null = null;
    expect(
      await repo.delete(gone.id, (b) => {
        before = b;
        return audited("addon.delete");
      }),
    ).toBe(true);
    expect(before!).toEqual(gone);
    expect(await repo.findById(gone.id)).toBeNull();
    expect(await repo.delete(gone.id, () => audited("addon.delete"))).toBe(false);
    const err = await rejection(repo.delete(attached.id, () => audited("addon.delete")));
    expect(err).toEqual({ code: "CONFLICT", message: "Licenses still have this add-on attached; detach it first." });
    expect(await repo.findById(attached.id)).toEqual(attached);
    expect(await auditActions(o)).toEqual(["addon.delete"]);
  });

  test("forLicense lists attached add-ons in attach order, ties by id in byte order", async () => {
    await setup();
    const { product, license } = await seedCatalog(o);
    const late = await seedAddon(o, product.id, { id: "0-late" });
    const lower = await seedAddon(o, product.id, { id: "a-b" });
    const upper = await seedAddon(o, product.id, { id: "Zed" });
    await seedAddon(o, product.id, { id: "unattached" });
    await insertRows(o, "licenseAddons", [
      { licenseId: license.id, addonId: late.id, createdAt: new Date(SEED_TIME.getTime() + 5) },
      { licenseId: license.id, addonId: lower.id, createdAt: SEED_TIME },
      { licenseId: license.id, addonId: upper.id, createdAt: SEED_TIME },
    ]);
    expect(await repo.forLicense(license.id)).toEqual([upper, lower, late]);
    expect(await repo.forLicense("nope")).toEqual([]);
  });

  if (engine === "postgres") {
    test("concurrent read-decide-write updates from three nodes: every decision sees the previous one", async () => {
      await setup();
      const product = await seedProduct(o);
      const a = await seedAddon(o, product.id, { quotaLimit: 0 });
      await withNodes(o, 3, (nodes) =>
        Promise.all(
          Array.from({ length: 24 }, (_, i) =>
            nodes[i % 3]!.addons.update(a.id, (cur) => ({ quotaLimit: cur.quotaLimit! + 1 }), AT, () => audited("addon.update")),
          ),
        ),
      );
      expect((await repo.findById(a.id))!.quotaLimit).toBe(24);
      expect((await auditActions(o)).length).toBe(24);
    });
  }
});
