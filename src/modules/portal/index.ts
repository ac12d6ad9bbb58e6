// Portal self-service routes (cookie session). The license_key in a body only names the license: the
// session cookie authenticates, and a license the caller has no standing on is 404 LICENSE_NOT_FOUND.
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { callerOf, type SessionAuth } from "../seats";
import { deactivateMine, myActivations, myLicenses } from "./service";
import { ActivationsBody, ActivationsResponse, DeactivateBody, MyLicensesQuery, MyLicensesResponse, PortalActivationSchema } from "./model";
import { presentMyLicense, presentPortalActivation } from "./present";

const portal = (summary: string, description: string) => ({ tags: ["Portal"], summary, description });

export function portalRoutes(deps: Deps, session: SessionAuth) {
  return new Elysia({ name: "keyward/portal" })
    .use(session)
    .get(
      "/portal/licenses",
      async ({ signedIn, request, query }) => {
        const page = await myLicenses(deps, callerOf(signedIn, request), { cursor: query.cursor, limit: query.limit });
        return ok({ items: page.items.map(presentMyLicense), next_cursor: page.nextCursor });
      },
      {
        signedIn: true,
        query: MyLicensesQuery,
        response: { 200: Envelope(MyLicensesResponse), ...errors(400, 401) },
        detail: portal(
          "Your licenses",
          "Licenses whose owner email is yours (role owner), newest first, then those you hold an accepted seat on (role admin or member), in acceptance order, with the key, product, plan, status, expiry, support window and seat counts. In pages of `limit` (default 50): follow `next_cursor` until it is null.",
        ),
      },
    )
    .post(
      "/portal/activations",
      async ({ body, signedIn, request }) => {
        const r = await myActivations(deps, callerOf(signedIn, request), body.license_key, { limit: body.limit, cursor: body.cursor });
        return ok({ license_id: r.license.id, items: r.activations.map(presentPortalActivation), next_cursor: r.nextCursor });
      },
      {
        signedIn: true,
        body: ActivationsBody,
        response: { 200: Envelope(ActivationsResponse), ...errors(401, 403, 404) },
        detail: portal("Activations of a license", "For the owner and every accepted seat. 404 LICENSE_NOT_FOUND otherwise."),
      },
    )
    .post(
      "/portal/activations/deactivate",
      async ({ body, signedIn, request }) =>
        ok(presentPortalActivation(await deactivateMine(deps, callerOf(signedIn, request), { licenseKey: body.license_key, activationId: body.activation_id }))),
      {
        signedIn: true,
        body: DeactivateBody,
        response: { 200: Envelope(PortalActivationSchema), ...errors(401, 403, 404) },
        detail: portal(
          "Deactivate a device (frees its slot)",
          "For the owner and accepted admin seats (others: 404 LICENSE_NOT_FOUND). Audited and recorded as the event activation.deleted (reason removed), as the admin removal is. 404 NOT_FOUND for an activation not on this license.",
        ),
      },
    );
}
