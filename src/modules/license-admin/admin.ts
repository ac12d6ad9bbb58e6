// Admin routes of licenses: each answers with the composite license view (service.ts).
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import {
  ActivationPageQuery,
  ActivationPageSchema,
  AttachAddonBody,
  ChangePlanBody,
  CreateLicenseBody,
  LicenseAddonParams,
  LicenseDetailSchema,
  LicenseIdParams,
  LicensePageSchema,
  ListLicensesQuery,
  RefundedLicenseSchema,
  SupportUntilBody,
  ValidUntilBody,
} from "./model";
import { toInstant } from "../../http/common-schemas";
import { presentLicenseDetail, presentRefundedLicense } from "./present";
import { refundLicense } from "../payments/refund";
import { presentLicenseSummary } from "../licenses/present";
import { createLicense, detailOf, getLicenseActivations, getLicenseDetail } from "./service";
import { presentActivation } from "../activations/present";
import {
  applyLicenseAction,
  attachLicenseAddon,
  changeLicensePlan,
  detachLicenseAddon,
  listLicenses,
  setLicenseSupportUntil,
  setLicenseValidUntil,
} from "../licenses/service";
import type { LicenseAction } from "../licenses/domain";

const detail = (summary: string) => ({ tags: ["Admin: licenses"], summary });
// Spec (API key rules): licenses:write creates, updates and manages licenses; admin does everything.
const WRITE = ["licenses:write"] as const;
const One = Envelope(LicenseDetailSchema);

const ACTIONS: Record<LicenseAction, string> = {
  revoke: "Revoke (terminal; drops activations) from any state but revoked",
  suspend: "Suspend an active, trialing or past_due license (the state is remembered)",
  reinstate: "Reinstate: suspended → the remembered state; expired or canceled → active",
};

export function licenseAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/licenses/admin" })
    .use(guard)
    .post(
      "/admin/licenses",
      async ({ actor, body, set }) => {
        const created = await createLicense(deps, actor, {
          productId: body.product_id,
          planId: body.plan_id,
          email: body.email,
          validUntil: toInstant("valid_until", body.valid_until),
          supportUntil: toInstant("support_until", body.support_until),
          externalCustomerId: body.external_customer_id,
          externalWorkspaceId: body.external_workspace_id,
          addonIds: body.addon_ids,
        });
        set.status = 201;
        return ok(presentLicenseDetail(created));
      },
      {
        scopes: WRITE,
        body: CreateLicenseBody,
        response: { 201: One, ...errors(401, 403) },
        detail: detail("Issue a license; the response carries its license_key"),
      },
    )
    .get(
      "/admin/licenses",
      async ({ actor, query }) => {
        const page = await listLicenses(deps, actor, {
          productId: query.product_id,
          planId: query.plan_id,
          status: query.status,
          search: query.search,
          externalCustomerId: query.external_customer_id,
          externalWorkspaceId: query.external_workspace_id,
          email: query.email,
          emailPrefix: query.email_prefix,
          emailDomain: query.email_domain,
          createdAfter: toInstant("created_after", query.created_after),
          createdBefore: toInstant("created_before", query.created_before),
          expiringBefore: toInstant("expiring_before", query.expiring_before),
          cursor: query.cursor,
          limit: query.limit,
        });
        return ok({ items: page.items.map((i) => presentLicenseSummary(i.license, i.planName)), next_cursor: page.nextCursor });
      },
      {
        scopes: WRITE,
        query: ListLicensesQuery,
        response: { 200: Envelope(LicensePageSchema), ...errors(401, 403) },
        detail: detail("List licenses, newest first (or by email / expiry), with filters and cursor pagination; no total"),
      },
    )
    .get("/admin/licenses/:id", async ({ actor, params }) => ok(presentLicenseDetail(await getLicenseDetail(deps, actor, params.id))), {
      scopes: WRITE,
      params: LicenseIdParams,
      response: { 200: One, ...errors(401, 403, 404) },
      detail: detail("Fetch a license with its key, add-ons, effective features and activations"),
    })
    .get(
      "/admin/licenses/:id/activations",
      async ({ actor, params, query }) => {
        const page = await getLicenseActivations(deps, actor, params.id, { limit: query.limit, cursor: query.cursor });
        return ok({ items: page.items.map(presentActivation), next_cursor: page.nextCursor });
      },
      {
        scopes: WRITE,
        params: LicenseIdParams,
        query: ActivationPageQuery,
        response: { 200: Envelope(ActivationPageSchema), ...errors(401, 403, 404) },
        detail: detail("A license's activations, oldest first, with cursor pagination (the license view holds the first 100)"),
      },
    )
    // Lifecycle actions (DECISIONS: License states); anything outside the table is 409 INVALID_TRANSITION.
    .post("/admin/licenses/:id/revoke", async ({ actor, params }) => ok(presentLicenseDetail(await detailOf(deps, await applyLicenseAction(deps, actor, params.id, "revoke")))), {
      scopes: WRITE,
      params: LicenseIdParams,
      response: { 200: One, ...errors(401, 403, 404, 409) },
      detail: detail(ACTIONS.revoke),
    })
    .post(
      "/admin/licenses/:id/refund",
      async ({ actor, params }) => {
        const refunded = await refundLicense(deps, actor, params.id);
        return ok(presentRefundedLicense(await detailOf(deps, refunded.license), refunded));
      },
      {
        scopes: WRITE,
        params: LicenseIdParams,
        response: { 200: Envelope(RefundedLicenseSchema), ...errors(401, 403, 404, 409, 502, 503) },
        detail: {
          ...detail("Refund the license's last payment through Stripe, then revoke the license"),
          description:
            "Refunds the license's most recent payment in full through Stripe and revokes the license (its activations and floating sessions are dropped) in one step; audit action `license.refund`, event `license.revoked`. A subscription license's Stripe subscription is canceled too. Safe to retry and to send twice at once: Stripe is asked with one idempotency key per payment, so a payment is refunded at most once; a retry after success answers 200 with the same refund (`refunded_now: false`). 409 `NOTHING_TO_REFUND` when the license has no recorded payment; 409 `REFUND_FAILED` when Stripe refuses (nothing changed); 502 `PAYMENT_PROVIDER_ERROR` when Stripe gave no definite answer (retry); 503 `PAYMENTS_NOT_CONFIGURED` without `STRIPE_SECRET_KEY`. See docs/payments.md (Refunds).",
        },
      },
    )
    .post("/admin/licenses/:id/suspend", async ({ actor, params }) => ok(presentLicenseDetail(await detailOf(deps, await applyLicenseAction(deps, actor, params.id, "suspend")))), {
      scopes: WRITE,
      params: LicenseIdParams,
      response: { 200: One, ...errors(401, 403, 404, 409) },
      detail: detail(ACTIONS.suspend),
    })
    .post("/admin/licenses/:id/reinstate", async ({ actor, params }) => ok(presentLicenseDetail(await detailOf(deps, await applyLicenseAction(deps, actor, params.id, "reinstate")))), {
      scopes: WRITE,
      params: LicenseIdParams,
      response: { 200: One, ...errors(401, 403, 404, 409) },
      detail: detail(ACTIONS.reinstate),
    })
    .post(
      "/admin/licenses/:id/change-plan",
      async ({ actor, params, body }) => ok(presentLicenseDetail(await detailOf(deps, await changeLicensePlan(deps, actor, params.id, body.plan_id)))),
      {
        scopes: WRITE,
        params: LicenseIdParams,
        body: ChangePlanBody,
        response: { 200: One, ...errors(401, 403, 404, 409) },
        detail: detail("Move a license to another plan of the same product"),
      },
    )
    .post(
      "/admin/licenses/:id/valid-until",
      async ({ actor, params, body }) => ok(presentLicenseDetail(await detailOf(deps, await setLicenseValidUntil(deps, actor, params.id, toInstant("valid_until", body.valid_until))))),
      {
        scopes: WRITE,
        params: LicenseIdParams,
        body: ValidUntilBody,
        response: { 200: One, ...errors(401, 403, 404, 409) },
        detail: detail("Set or (with null) clear the expiry"),
      },
    )
    .post(
      "/admin/licenses/:id/support-until",
      async ({ actor, params, body }) =>
        ok(presentLicenseDetail(await detailOf(deps, await setLicenseSupportUntil(deps, actor, params.id, toInstant("support_until", body.support_until))))),
      {
        scopes: WRITE,
        params: LicenseIdParams,
        body: SupportUntilBody,
        response: { 200: One, ...errors(401, 403, 404, 409) },
        detail: detail("Set or (with null) clear the support/updates window"),
      },
    )
    .post(
      "/admin/licenses/:id/addons",
      async ({ actor, params, body }) => ok(presentLicenseDetail(await detailOf(deps, await attachLicenseAddon(deps, actor, params.id, body.addon_id)))),
      {
        scopes: WRITE,
        params: LicenseIdParams,
        body: AttachAddonBody,
        response: { 200: One, ...errors(401, 403, 404, 409) },
        detail: detail("Attach an add-on of the license's product (attaching twice changes nothing)"),
      },
    )
    .delete(
      "/admin/licenses/:id/addons/:addon_id",
      async ({ actor, params }) => ok(presentLicenseDetail(await detailOf(deps, await detachLicenseAddon(deps, actor, params.id, params.addon_id)))),
      {
        scopes: WRITE,
        params: LicenseAddonParams,
        response: { 200: One, ...errors(401, 403, 404, 409) },
        detail: detail("Detach an add-on from a license"),
      },
    );
}
