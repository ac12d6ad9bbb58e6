// AddonRepo on every engine: its rows (create, lock, update, delete), constraint conflicts as CONFLICT,
// attach order of forLicense; a unit of work that throws after a write leaves nothing; and on
// PostgreSQL, concurrent lock-decide-write units from three nodes, each deciding on the previous one.
// The update rule itself is domain.ts's addonPatch (domain.test.ts); the verbs are service.ts's.
import { afterEach, expect, test } from "bun:test";
import type { Addon, AddonRepo } from "../../src/modules/addons/repo";
import { forEachEngine, type Opened } from "./harness";
import { SEED_TIME, insertRows, seedCatalog, seedProduct } from "./seed";
import { repoFor } from "./repos";
import { AT, auditActions, audited, rejection } from "./rows";
import { unitOf, withPgUnits } from "./unit";

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

  test("create stores the add-on; findById; null for unknown; nothing audited by the repository", async () => {
    await setup();
    const product = await seedProduct(o);
    const a = addon(product.id, { quotaLimit: 6_000_000_000, value: "6000000000", quotaPeriod: null });
    expect(await repo.create(a)).toEqual(a);
    expect(await repo.findById(a.id)).toEqual(a);
    expect(await repo.findById("nope")).toBeNull();
    expect(await auditActions(o)).toEqual([]);
  });

  test("create refuses a duplicate name and an unknown product with CONFLICT, writing nothing", async () => {
    await setup();
    const product = await seedProduct(o);
    const first = await seedAddon(o, product.id, { name: "Exports" });
    const dup = await rejection(unitOf(o)((r) => r.addons.create(addon(product.id, { name: "Exports" }))));
    expect(dup).toEqual({ code: "CONFLICT", message: 'The product already has an add-on named "Exports".' });
    const fk = await rejection(unitOf(o)((r) => r.addons.create(addon("no-such-product"))));
    expect(fk).toEqual({ code: "CONFLICT", message: "Unknown product." });
    expect(await repo.list({})).toEqual([first]);
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

  test("lock reads the current row (null for unknown); update writes the patch and returns the row as it is now", async () => {
    await setup();
    const product = await seedProduct(o);
    const a = await seedAddon(o, product.id);
    const updated = await unitOf(o)(async (r) => {
      expect(await r.addons.lock(a.id)).toEqual(a);
      expect(await r.addons.lock("nope")).toBeNull();
      return r.addons.update(a.id, { name: "Renamed", valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null }, AT);
    });
    expect(updated).toEqual({ ...a, name: "Renamed", valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null, updatedAt: AT });
    expect(await repo.findById(a.id)).toEqual(updated);
  });

  test("a unit that throws after its update, or whose update takes a taken name (CONFLICT), changes nothing", async () => {
    await setup();
    const product = await seedProduct(o);
    await seedAddon(o, product.id, { name: "Taken" });
    const a = await seedAddon(o, product.id);
    const thrown = await rejection(
      unitOf(o)(async (r) => {
        await r.addons.update(a.id, { name: "Other" }, AT);
        await r.outbox.writeEffects(audited("addon.update"));
        return boom();
      }),
    );
    expect(thrown).toEqual({ code: "(no code)", message: "refused" });
    const err = await rejection(unitOf(o)((r) => r.addons.update(a.id, { name: "Taken" }, AT)));
    expect(err).toEqual({ code: "CONFLICT", message: "The product already has an add-on with this name." });
    expect(await repo.findById(a.id)).toEqual(a);
    expect(await auditActions(o)).toEqual([]);
  });

  test("delete removes it; CONFLICT while attached, and the add-on stays", async () => {
    await setup();
    const { product, license } = await seedCatalog(o);
    const gone = await seedAddon(o, product.id);
    const attached = await seedAddon(o, product.id);
    await insertRows(o, "licenseAddons", [{ licenseId: license.id, addonId: attached.id, createdAt: SEED_TIME }]);
    await unitOf(o)((r) => r.addons.delete(gone.id));
    expect(await repo.findById(gone.id)).toBeNull();
    const err = await rejection(unitOf(o)((r) => r.addons.delete(attached.id)));
    expect(err).toEqual({ code: "CONFLICT", message: "Licenses still have this add-on attached; detach it first." });
    expect(await repo.findById(attached.id)).toEqual(attached);
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
    test("concurrent lock-decide-write units from three nodes: every decision sees the previous one", async () => {
      await setup();
      const product = await seedProduct(o);
      const a = await seedAddon(o, product.id, { quotaLimit: 0 });
      await withPgUnits(o, 3, (units) =>
        Promise.all(
          Array.from({ length: 24 }, (_, i) =>
            units[i % 3]!(async (r) => {
              const cur = await r.addons.lock(a.id);
              await r.addons.update(a.id, { quotaLimit: cur!.quotaLimit! + 1 }, AT);
              await r.outbox.writeEffects(audited("addon.update"));
            }),
          ),
        ),
      );
      expect((await repo.findById(a.id))!.quotaLimit).toBe(24);
      expect((await auditActions(o)).length).toBe(24);
    });
  }
});
