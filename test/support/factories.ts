// Fixtures built through the real services (so audit rows, hashing and encryption all happen).
import type { Deps } from "../../src/deps";
import { SYSTEM_ACTOR } from "../../src/shared/actor";
import { newId } from "../../src/shared/ids";
import { createProduct } from "../../src/modules/products/service";
import { issueLicense, type IssueLicenseInput } from "../../src/modules/licenses/service";
import type { Plan, PlanFeature } from "../../src/modules/plans/repo";
import type { Product } from "../../src/modules/products/repo";
import { planValue } from "./plan-value";

let seq = 0;

export async function makeProduct(deps: Deps, over: Partial<Parameters<typeof createProduct>[2]> = {}): Promise<Product> {
  seq += 1;
  return await createProduct(deps, SYSTEM_ACTOR, { name: `Product ${seq}`, slug: `product-${seq}-${newId().slice(-6)}`, ...over });
}

export async function makePlan(
  deps: Deps,
  productId: string,
  over: Partial<Plan> = {},
  features: (Omit<PlanFeature, "id" | "planId" | "createdAt" | "stripeMeter"> & { stripeMeter?: string | null })[] = [],
): Promise<Plan> {
  const now = deps.clock.now();
  const plan = planValue(productId, now, over);
  return await deps.db.transaction(async ({ repos }) => {
    const created = await repos.plans.create(
      plan,
      features.map((f) => ({ stripeMeter: null, ...f, id: newId(), planId: plan.id, createdAt: now })),
    );
    await repos.outbox.writeEffects({ audit: { actor: SYSTEM_ACTOR, action: "plan.create", entityType: "plan", entityId: plan.id, productId, changes: null, at: now } });
    return created;
  });
}

export async function makeLicense(deps: Deps, input: Partial<IssueLicenseInput> & Pick<IssueLicenseInput, "productId" | "planId">) {
  return await issueLicense(deps, SYSTEM_ACTOR, { email: `user${++seq}@example.com`, ...input });
}

/** A product, a plan and a license in one call. */
export async function makeCatalog(deps: Deps, planOver: Partial<Plan> = {}, features: Parameters<typeof makePlan>[3] = []) {
  const product = await makeProduct(deps);
  const plan = await makePlan(deps, product.id, planOver, features);
  const { license, key } = await makeLicense(deps, { productId: product.id, planId: plan.id });
  return { product, plan, license, key };
}
