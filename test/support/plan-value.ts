// The one plan factory of the tests: a Plan value with the defaults every test starts from (a
// perpetual plan, 3 activations, a year of support), `over` on top. Written by the caller: through
// the repository (support/factories.ts makePlan), as raw rows (contract/seed.ts seedPlan), or handed
// to PlanRepo.create by the plans contract.
import { newId } from "../../src/shared/ids";
import type { Plan } from "../../src/modules/plans/repo";

let seq = 0;

export function planValue(productId: string, at: Date, over: Partial<Plan> = {}): Plan {
  return {
    id: newId(),
    productId,
    name: `Plan ${++seq}`,
    licenseType: "perpetual",
    trialDays: 14,
    graceDays: 0,
    maxActivations: 3,
    maxSeats: null,
    floating: false,
    floatingTimeout: 30,
    supportDays: 365,
    supportRenewalPriceId: null,
    purchasePriceId: null,
    purchaseTrialDays: 0,
    portalOfflineActivation: true,
    quotaPeriod: "monthly",
    createdAt: at,
    updatedAt: at,
    ...over,
  };
}
