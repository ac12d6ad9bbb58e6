import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Empty, Envelope, errors, ok } from "../../http/envelope";
import { CreatePlanBody, FeatureParams, FeatureSchema, ListPlansQuery, PlanIdParams, PlanSchema, UpdatePlanBody, UpsertFeatureBody } from "./model";
import { presentFeature, presentPlan } from "./present";
import {
  createPlan,
  deletePlan,
  deletePlanFeature,
  getPlanWithFeatures,
  listPlans,
  updatePlan,
  upsertPlanFeature,
} from "./service";
import type { PlanPatch } from "./repo";

const detail = (summary: string) => ({ tags: ["Admin: plans"], summary });
// DECISIONS/COMMON rule 8: a licenses:write key may read plans (it needs plan ids to issue licenses).
const READ = ["licenses:write"] as const;

/** Wire (snake_case) plan fields → domain patch; absent fields stay absent. */
function planPatch(b: typeof UpdatePlanBody.static): PlanPatch {
  const patch: PlanPatch = {
    name: b.name,
    licenseType: b.license_type,
    trialDays: b.trial_days,
    graceDays: b.grace_days,
    maxActivations: b.max_activations,
    maxSeats: b.max_seats,
    floating: b.floating,
    floatingTimeout: b.floating_timeout,
    supportDays: b.support_days,
    supportRenewalPriceId: b.support_renewal_price_id,
    purchasePriceId: b.purchase_price_id,
    purchaseTrialDays: b.purchase_trial_days,
    portalOfflineActivation: b.portal_offline_activation,
    quotaPeriod: b.quota_period,
  };
  for (const k of Object.keys(patch) as (keyof PlanPatch)[]) if (patch[k] === undefined) delete patch[k];
  return patch;
}

const featureSpec = (b: typeof UpsertFeatureBody.static) => ({
  valueType: b.value_type,
  value: b.value,
  quotaLimit: b.quota_limit,
  quotaPeriod: b.quota_period,
  stripeMeter: b.stripe_meter,
});

export function planAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/plans/admin" })
    .use(guard)
    .post(
      "/admin/plans",
      async ({ actor, body, set }) => {
        const { product_id, features, ...fields } = body;
        const created = await createPlan(deps, actor, {
          productId: product_id,
          name: body.name,
          licenseType: body.license_type,
          ...planPatch(fields),
          features: features?.map((f) => ({ name: f.name, ...featureSpec(f) })),
        });
        set.status = 201;
        return ok(presentPlan(created));
      },
      {
        scopes: ["admin"],
        body: CreatePlanBody,
        response: { 201: Envelope(PlanSchema), ...errors(401, 403, 409) },
        detail: detail("Create a plan, optionally with its features"),
      },
    )
    .get("/admin/plans", async ({ actor, query }) => ok({ items: (await listPlans(deps, actor, query.product_id)).map(presentPlan) }), {
      scopes: READ,
      query: ListPlansQuery,
      response: { 200: Envelope(t.Object({ items: t.Array(PlanSchema) })), ...errors(401, 403) },
      detail: detail("List plans, optionally of one product (by UUID); a product-bound key sees only its product"),
    })
    .get("/admin/plans/:id", async ({ actor, params }) => ok(presentPlan(await getPlanWithFeatures(deps, actor, params.id))), {
      scopes: READ,
      params: PlanIdParams,
      response: { 200: Envelope(PlanSchema), ...errors(401, 403, 404) },
      detail: detail("Fetch a plan with its features"),
    })
    .patch("/admin/plans/:id", async ({ actor, params, body }) => ok(presentPlan(await updatePlan(deps, actor, params.id, planPatch(body)))), {
      scopes: ["admin"],
      params: PlanIdParams,
      body: UpdatePlanBody,
      response: { 200: Envelope(PlanSchema), ...errors(401, 403, 404) },
      detail: detail("Update a plan's settings (licenses on it see the change at once)"),
    })
    .delete(
      "/admin/plans/:id",
      async ({ actor, params }) => {
        await deletePlan(deps, actor, params.id);
        return ok({});
      },
      {
        scopes: ["admin"],
        params: PlanIdParams,
        response: { 200: Envelope(Empty), ...errors(401, 403, 404, 409) },
        detail: detail("Delete a plan no license uses (409 CONFLICT otherwise)"),
      },
    )
    .put(
      "/admin/plans/:id/features/:name",
      async ({ actor, params, body }) => ok(presentFeature(await upsertPlanFeature(deps, actor, params.id, params.name, featureSpec(body)))),
      {
        scopes: ["admin"],
        params: FeatureParams,
        body: UpsertFeatureBody,
        response: { 200: Envelope(FeatureSchema), ...errors(401, 403, 404) },
        detail: detail("Create or replace a plan feature"),
      },
    )
    .delete(
      "/admin/plans/:id/features/:name",
      async ({ actor, params }) => {
        await deletePlanFeature(deps, actor, params.id, params.name);
        return ok({});
      },
      {
        scopes: ["admin"],
        params: FeatureParams,
        response: { 200: Envelope(Empty), ...errors(401, 403, 404) },
        detail: detail("Remove a feature from a plan"),
      },
    );
}
