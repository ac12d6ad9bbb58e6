// Plan catalog verbs. Catalog writes are admin-only at the route layer; a product-bound admin key is
// still confined to its product (assertProductAccess on every load and create).
import type { Deps } from "../../deps";
import { AppError, validationError } from "../../shared/errors";
import { newId } from "../../shared/ids";
import { assertProductAccess, scopedProductFilter, type Actor } from "../../shared/actor";
import type { Effects } from "../outbox/effects";
import { createdChanges, deletedChanges, diffChanges, type Changes } from "./changes";
import { normalizeFeature, type FeatureSpec } from "./domain";
import { featureAuditView, presentPlanFields } from "./present";
import type { LicenseType, Plan, PlanFeature, PlanPatch, QuotaPeriod } from "./repo";

export interface PlanWithFeatures {
  plan: Plan;
  features: PlanFeature[];
}

export interface CreatePlanInput {
  productId: string;
  name: string;
  licenseType: LicenseType;
  trialDays?: number;
  graceDays?: number;
  maxActivations?: number | null;
  maxSeats?: number | null;
  floating?: boolean;
  floatingTimeout?: number;
  supportDays?: number;
  supportRenewalPriceId?: string | null;
  purchasePriceId?: string | null;
  purchaseTrialDays?: number;
  portalOfflineActivation?: boolean;
  quotaPeriod?: QuotaPeriod;
  features?: (PlanFeatureSpec & { name: string })[];
}

/** A plan feature's definition: the shared value rules plus the plan-only Stripe meter. */
export type PlanFeatureSpec = FeatureSpec & { stripeMeter?: string | null | undefined };

/** Only quota features count usage, so only they may report it to a Stripe meter. */
function planFeatureMeter(spec: PlanFeatureSpec, field = ""): string | null {
  const meter = spec.stripeMeter ?? null;
  if (meter !== null && spec.valueType !== "quota") throw validationError({ [`${field}stripe_meter`]: "only quota features report usage to a Stripe meter" });
  return meter;
}

const audit = (deps: Deps, actor: Actor, action: string, plan: Pick<Plan, "id" | "productId">, changes: Changes): Effects => ({
  audit: {
    actor,
    action,
    entityType: "plan",
    entityId: plan.id,
    productId: plan.productId,
    changes,
    at: deps.clock.now(),
  },
});

const notFound = () => new AppError("NOT_FOUND", { message: "Plan not found." });

export async function createPlan(deps: Deps, actor: Actor, input: CreatePlanInput): Promise<PlanWithFeatures> {
  assertProductAccess(actor, input.productId);
  if (!await deps.repos.products.findById(input.productId)) throw validationError({ product_id: "unknown product" });
  const now = deps.clock.now();
  const plan: Plan = {
    id: newId(),
    productId: input.productId,
    name: input.name,
    licenseType: input.licenseType,
    trialDays: input.trialDays ?? 14,
    graceDays: input.graceDays ?? 0,
    maxActivations: input.maxActivations ?? null,
    maxSeats: input.maxSeats ?? null,
    floating: input.floating ?? false,
    floatingTimeout: input.floatingTimeout ?? 30,
    supportDays: input.supportDays ?? 365,
    supportRenewalPriceId: input.supportRenewalPriceId ?? null,
    purchasePriceId: input.purchasePriceId ?? null,
    purchaseTrialDays: input.purchaseTrialDays ?? 0,
    portalOfflineActivation: input.portalOfflineActivation ?? true,
    quotaPeriod: input.quotaPeriod ?? "monthly",
    createdAt: now,
    updatedAt: now,
  };
  const seen = new Set<string>();
  const features: PlanFeature[] = (input.features ?? []).map((f, i) => {
    if (seen.has(f.name)) throw validationError({ [`features.${i}.name`]: `duplicate feature name "${f.name}"` });
    seen.add(f.name);
    return { id: newId(), planId: plan.id, name: f.name, ...normalizeFeature(f, `features.${i}.`), stripeMeter: planFeatureMeter(f, `features.${i}.`), createdAt: now };
  });
  const created = await deps.db.transaction(async ({ repos }) => {
    const row = await repos.plans.create(plan, features);
    await repos.outbox.writeEffects(audit(deps, actor, "plan.create", plan, createdChanges({ ...presentPlanFields(plan), features: features.map(featureAuditView) })));
    return row;
  });
  return { plan: created, features: features.sort((a, b) => (a.name < b.name ? -1 : 1)) };
}

/** 404 when missing, 403 PRODUCT_SCOPE_MISMATCH for a bound key's other products. */
export async function getPlan(deps: Deps, actor: Actor, id: string): Promise<Plan> {
  const plan = await deps.repos.plans.findById(id);
  if (!plan) throw notFound();
  assertProductAccess(actor, plan.productId);
  return plan;
}

export async function getPlanWithFeatures(deps: Deps, actor: Actor, id: string): Promise<PlanWithFeatures> {
  const plan = await getPlan(deps, actor, id);
  return { plan, features: await deps.repos.plans.features(plan.id) };
}

export async function listPlans(deps: Deps, actor: Actor, productId: string | undefined): Promise<PlanWithFeatures[]> {
  const plans = await deps.repos.plans.list({ productId: scopedProductFilter(actor, productId) });
  return Promise.all(plans.map(async (plan) => ({ plan, features: await deps.repos.plans.features(plan.id) })));
}

export async function updatePlan(deps: Deps, actor: Actor, id: string, patch: PlanPatch): Promise<PlanWithFeatures> {
  await getPlan(deps, actor, id);
  const updated = await deps.db.transaction(async ({ repos }) => {
    const before = await repos.plans.lock(id);
    if (!before) return null;
    const after = await repos.plans.update(id, patch, deps.clock.now());
    await repos.outbox.writeEffects(audit(deps, actor, "plan.update", after, diffChanges(presentPlanFields(before), presentPlanFields(after))));
    return after;
  });
  if (!updated) throw notFound();
  return { plan: updated, features: await deps.repos.plans.features(id) };
}

/** 409 CONFLICT while licenses use the plan (they reference it with ON DELETE RESTRICT). */
export async function deletePlan(deps: Deps, actor: Actor, id: string): Promise<void> {
  await getPlan(deps, actor, id);
  const gone = await deps.db.transaction(async ({ repos }) => {
    // Held first, so the audit row lists the features as they were when the plan went.
    if (!(await repos.plans.lock(id))) return false;
    const features = await repos.plans.features(id);
    const before = await repos.plans.delete(id);
    if (!before) return false;
    await repos.outbox.writeEffects(audit(deps, actor, "plan.delete", before, deletedChanges({ ...presentPlanFields(before), features: features.map(featureAuditView) })));
    return true;
  });
  if (!gone) throw notFound();
}

export async function upsertPlanFeature(deps: Deps, actor: Actor, planId: string, name: string, spec: PlanFeatureSpec): Promise<PlanFeature> {
  const plan = await getPlan(deps, actor, planId);
  const now = deps.clock.now();
  const feature: PlanFeature = { id: newId(), planId: plan.id, name, ...normalizeFeature(spec), stripeMeter: planFeatureMeter(spec), createdAt: now };
  // One unit of work: the plan held (writers of one plan's features run one after the other), the
  // feature as it was, the new one, and the audit row of the difference.
  return await deps.db.transaction(async ({ repos }) => {
    if (!(await repos.plans.lock(plan.id))) throw notFound();
    const before = await repos.plans.feature(plan.id, name);
    const after = await repos.plans.upsertFeature(feature);
    await repos.outbox.writeEffects(
      audit(
        deps,
        actor,
        "plan.feature.upsert",
        plan,
        before ? { feature: name, ...diffChanges(featureAuditView(before), featureAuditView(after)) } : { feature: name, ...createdChanges(featureAuditView(after)) },
      ),
    );
    return after;
  });
}

export async function deletePlanFeature(deps: Deps, actor: Actor, planId: string, name: string): Promise<void> {
  const plan = await getPlan(deps, actor, planId);
  const gone = await deps.db.transaction(async ({ repos }) => {
    if (!(await repos.plans.lock(plan.id))) throw notFound();
    const before = await repos.plans.deleteFeature(plan.id, name);
    if (before) await repos.outbox.writeEffects(audit(deps, actor, "plan.feature.delete", plan, { feature: name, ...deletedChanges(featureAuditView(before)) }));
    return before !== null;
  });
  if (!gone) throw new AppError("NOT_FOUND", { message: `The plan has no feature "${name}".` });
}
