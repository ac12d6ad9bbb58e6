// LicenseAccessRepo on every engine: the public API's license + plan read, and the same with the
// license's feature grants (usage reports).
import { afterEach, expect, test } from "bun:test";
import type { LicenseAccess, LicenseAccessRepo } from "../../src/modules/license-api/repo";
import { forEachEngine, type Opened } from "./harness";
import { insertRows, seedCatalog, seedLicense, SEED_TIME } from "./seed";
import { seedAddon } from "./inspect";
import { repoFor } from "./repos";

forEachEngine("LicenseAccessRepo", (engine, open) => {
  let o: Opened;
  let repo: LicenseAccessRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).licenseAccess;
  };
  afterEach(() => o?.close());

  test("finds a license and its plan by key hash and by id; null for unknown", async () => {
    await setup();
    const { license, plan } = await seedCatalog(o, { graceDays: 3, maxActivations: 5, floating: true, floatingTimeout: 10, quotaPeriod: "daily" });
    const expected: LicenseAccess = {
      license: {
        id: license.id,
        productId: license.productId,
        planId: plan.id,
        status: "active",
        validUntil: null,
        supportUntil: null,
        externalCustomerId: null,
        externalWorkspaceId: null,
      },
      plan: { id: plan.id, name: plan.name, graceDays: 3, maxActivations: 5, floating: true, floatingTimeout: 10, quotaPeriod: "daily" },
    };
    expect(await repo.findByKeyHash(license.keyHash)).toEqual(expected);
    expect(await repo.findById(license.id)).toEqual(expected);
    expect(await repo.findByKeyHash("nope")).toBeNull();
    expect(await repo.findById("nope")).toBeNull();
  });

  test("findWithGrants: the license, its plan and the grants EntitlementRepo.grants reads, in its order; null for unknown", async () => {
    await setup();
    const { license, plan, product } = await seedCatalog(o, { quotaPeriod: "daily" }, [
      { name: "beta", valueType: "bool", value: "false", quotaLimit: null, quotaPeriod: null },
      { name: "Alpha", valueType: "quota", value: "", quotaLimit: 9_000_000_000, quotaPeriod: null },
    ]);
    const at = (ms: number) => new Date(SEED_TIME.getTime() + ms);
    const a = await seedAddon(o, product.id, { featureName: "beta", value: "true" });
    const b = await seedAddon(o, product.id, { featureName: "gamma", valueType: "string", value: "x" });
    const c = await seedAddon(o, product.id, { featureName: "api", valueType: "quota", value: "", quotaLimit: 7, quotaPeriod: "yearly" });
    const bare = await seedLicense(o, product.id, plan.id);
    await insertRows(o, "licenseAddons", [
      { licenseId: license.id, addonId: a.id, createdAt: at(2000) },
      { licenseId: license.id, addonId: c.id, createdAt: at(1000) },
      { licenseId: license.id, addonId: b.id, createdAt: at(1000) },
    ]);
    const grants = repoFor(o).entitlements;
    const found = await repo.findWithGrants(license.keyHash);
    expect(found).toEqual({ access: (await repo.findByKeyHash(license.keyHash))!, grants: await grants.grants(plan.id, license.id) });
    expect(found!.grants.map((g) => `${g.source}:${g.name}`)).toEqual(["plan:Alpha", "plan:beta", ...[b, c].sort((x, y) => (x.id < y.id ? -1 : 1)).map((x) => `addon:${x.featureName}`), "addon:beta"]);
    expect(await repo.findWithGrants(bare.keyHash)).toEqual({ access: (await repo.findByKeyHash(bare.keyHash))!, grants: await grants.grants(plan.id, bare.id) });
    expect(await repo.findWithGrants("nope")).toBeNull();
  });
});
