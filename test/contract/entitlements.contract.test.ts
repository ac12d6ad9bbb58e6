// EntitlementRepo on every engine: plan grants (name order), then add-on grants in attach order with
// the add-on id breaking ties; only the given license's add-ons; and findWithGrants (license, plan
// and grants by key hash, for usage reports).
import { afterEach, expect, test } from "bun:test";
import type { EntitlementRepo, FeatureGrant } from "../../src/modules/entitlements/repo";
import { forEachEngine, type Opened } from "./harness";
import { insertRows, seedCatalog, seedLicense, seedPlan, SEED_TIME } from "./seed";
import { repoFor } from "./repos";
import { seedAddon } from "./inspect";

const later = (ms: number) => new Date(SEED_TIME.getTime() + ms);

forEachEngine("EntitlementRepo", (_engine, open) => {
  let o: Opened;
  let repo: EntitlementRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).entitlements;
  };
  afterEach(() => o?.close());

  test("plan grants, then add-on grants by attach time then add-on id", async () => {
    await setup();
    const { license, plan, product } = await seedCatalog(o, {}, [
      { name: "beta", valueType: "bool", value: "false", quotaLimit: null, quotaPeriod: null },
      { name: "Alpha", valueType: "quota", value: "", quotaLimit: 9_000_000_000, quotaPeriod: null },
    ]);
    const a = await seedAddon(o, product.id, { featureName: "beta", value: "true" });
    const b = await seedAddon(o, product.id, { featureName: "gamma", valueType: "string", value: "x" });
    const c = await seedAddon(o, product.id, { featureName: "api", valueType: "quota", value: "", quotaLimit: 7, quotaPeriod: "yearly" });
    const [first, second] = [b.id, c.id].sort() as [string, string];
    const other = await seedLicense(o, product.id, plan.id);
    await insertRows(o, "licenseAddons", [
      { licenseId: license.id, addonId: a.id, createdAt: later(2000) },
      { licenseId: license.id, addonId: second, createdAt: later(1000) },
      { licenseId: license.id, addonId: first, createdAt: later(1000) },
      { licenseId: other.id, addonId: a.id, createdAt: later(0) },
    ]);
    const addonGrant = (x: typeof a) => ({ source: "addon" as const, name: x.featureName, valueType: x.valueType, value: x.value, quotaLimit: x.quotaLimit, quotaPeriod: x.quotaPeriod });
    const byId = new Map([a, b, c].map((x) => [x.id, x]));
    expect(await repo.grants(plan.id, license.id)).toEqual([
      { source: "plan", name: "Alpha", valueType: "quota", value: "", quotaLimit: 9_000_000_000, quotaPeriod: null },
      { source: "plan", name: "beta", valueType: "bool", value: "false", quotaLimit: null, quotaPeriod: null },
      addonGrant(byId.get(first)!),
      addonGrant(byId.get(second)!),
      addonGrant(a),
    ]);
    expect(await repo.grants(plan.id, other.id)).toEqual([
      { source: "plan", name: "Alpha", valueType: "quota", value: "", quotaLimit: 9_000_000_000, quotaPeriod: null },
      { source: "plan", name: "beta", valueType: "bool", value: "false", quotaLimit: null, quotaPeriod: null },
      addonGrant(a),
    ]);
  });

  test("a plan without features and a license without add-ons grant nothing; unknown ids give []", async () => {
    await setup();
    const { license, product } = await seedCatalog(o);
    const { plan: bare } = await seedPlan(o, product.id);
    expect(await repo.grants(bare.id, license.id)).toEqual([]);
    expect(await repo.grants("nope", "nope")).toEqual([]);
    const addon = await seedAddon(o, product.id);
    await insertRows(o, "licenseAddons", [{ licenseId: license.id, addonId: addon.id, createdAt: later(1) }]);
    expect(await repo.grants("nope", license.id)).toEqual([
      { source: "addon", name: addon.featureName, valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null },
    ]);
  });

  test("findWithGrants: the license and plan findByKeyHash reads, with the grants grants() reads, in its order; null for unknown", async () => {
    await setup();
    const { license, plan, product } = await seedCatalog(o, { quotaPeriod: "daily" }, [
      { name: "beta", valueType: "bool", value: "false", quotaLimit: null, quotaPeriod: null },
      { name: "Alpha", valueType: "quota", value: "", quotaLimit: 9_000_000_000, quotaPeriod: null },
    ]);
    const a = await seedAddon(o, product.id, { featureName: "beta", value: "true" });
    const b = await seedAddon(o, product.id, { featureName: "gamma", valueType: "string", value: "x" });
    const c = await seedAddon(o, product.id, { featureName: "api", valueType: "quota", value: "", quotaLimit: 7, quotaPeriod: "yearly" });
    const bare = await seedLicense(o, product.id, plan.id);
    await insertRows(o, "licenseAddons", [
      { licenseId: license.id, addonId: a.id, createdAt: later(2000) },
      { licenseId: license.id, addonId: c.id, createdAt: later(1000) },
      { licenseId: license.id, addonId: b.id, createdAt: later(1000) },
    ]);
    const access = repoFor(o).licenseAccess;
    const found = await repo.findWithGrants(license.keyHash);
    expect(found).toEqual({ access: (await access.findByKeyHash(license.keyHash))!, grants: await repo.grants(plan.id, license.id) });
    const tied = [b, c].sort((x, y) => (x.id < y.id ? -1 : 1)).map((x) => `addon:${x.featureName}`);
    expect(found!.grants.map((g) => `${g.source}:${g.name}`)).toEqual(["plan:Alpha", "plan:beta", ...tied, "addon:beta"]);
    expect(await repo.findWithGrants(bare.keyHash)).toEqual({ access: (await access.findByKeyHash(bare.keyHash))!, grants: await repo.grants(plan.id, bare.id) });
    expect(await repo.findWithGrants("nope")).toBeNull();
  });

  test("a plan quota's stripe_meter is read with the grants (set only where named), by grants() and findWithGrants()", async () => {
    await setup();
    const { license, plan } = await seedCatalog(o, {}, [
      { name: "api", valueType: "quota", value: "", quotaLimit: 100, quotaPeriod: null, stripeMeter: "api_calls" },
      { name: "exports", valueType: "quota", value: "", quotaLimit: 5, quotaPeriod: null },
    ]);
    const expected: FeatureGrant[] = [
      { source: "plan", name: "api", valueType: "quota", value: "", quotaLimit: 100, quotaPeriod: null, stripeMeter: "api_calls" },
      { source: "plan", name: "exports", valueType: "quota", value: "", quotaLimit: 5, quotaPeriod: null },
    ];
    const grants = await repo.grants(plan.id, license.id);
    expect(grants).toEqual(expected);
    expect("stripeMeter" in grants[1]!).toBe(false);
    expect((await repo.findWithGrants(license.keyHash))!.grants).toEqual(expected);
  });
});
