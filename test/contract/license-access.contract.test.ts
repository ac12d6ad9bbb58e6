// LicenseAccessRepo on every engine: the public API's license + plan read.
import { afterEach, expect, test } from "bun:test";
import type { LicenseAccess, LicenseAccessRepo } from "../../src/modules/license-api/repo";
import { forEachEngine, type Opened } from "./harness";
import { seedCatalog } from "./seed";
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
});
