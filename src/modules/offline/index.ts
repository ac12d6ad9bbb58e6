// Portal self-service offline activation (cookie session): one per license, for plans that offer it
// (portal_offline_activation on, not floating); only an admin clears it (admin.ts). The license_key in a body only names the
// license: the session cookie authenticates.
import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { callerOf, type SessionAuth } from "../seats";
import { PortalOfflineActivatedSchema, PortalOfflineBody, portalOfflineModels, PortalOfflineViewSchema } from "./model";
import { presentPortalOfflineActivated, presentPortalOfflineView } from "./present";
import { portalOfflineActivate, portalOfflineLicenseFile, portalOfflineView } from "./service";

const portal = (summary: string, description: string) => ({ tags: ["Portal"], summary, description });

export function offlinePortalRoutes(deps: Deps, session: SessionAuth) {
  const m = portalOfflineModels(deps.config.identifierMaxLength);
  return new Elysia({ name: "keyward/offline/portal" })
    .use(session)
    .post(
      "/portal/offline-activation",
      async ({ body, signedIn, request }) => ok(presentPortalOfflineView(await portalOfflineView(deps, callerOf(signedIn, request), body.license_key))),
      {
        signedIn: true,
        body: PortalOfflineBody,
        response: { 200: Envelope(PortalOfflineViewSchema), ...errors(401, 403, 404) },
        detail: portal(
          "The license's self-service offline activation",
          "For the owner and every accepted seat. `offered` is true iff the plan's `portal_offline_activation` setting is on and the plan is not floating (floating plans have no device activation); otherwise the option is hidden and `activation` is null. `activation` is the live one, or null.",
        ),
      },
    )
    .post(
      "/portal/offline-activation/activate",
      async ({ body, signedIn, request }) =>
        ok(presentPortalOfflineActivated(await portalOfflineActivate(deps, callerOf(signedIn, request), body.license_key, body.identifier))),
      {
        signedIn: true,
        body: m.PortalOfflineActivateBody,
        response: { 200: Envelope(PortalOfflineActivatedSchema), ...errors(401, 403, 404, 409) },
        detail: portal(
          "Activate a machine offline (once per license)",
          "For the owner and accepted admin seats (others: 404 LICENSE_NOT_FOUND). Signs an offline token for `identifier`, expiring with the license (valid_until + grace_days) or perpetual. " +
            "409 CONFLICT while the license already has one (only an admin clears it); 409 INVALID_TRANSITION unless the license is active or trialing; 403 FORBIDDEN when the plan does not offer it (`portal_offline_activation` false, or a floating plan).",
        ),
      },
    )
    .post(
      "/portal/offline-activation/license-file",
      async ({ body, signedIn, request }) => {
        const file = await portalOfflineLicenseFile(deps, callerOf(signedIn, request), body.license_key);
        return new Response(file.content, {
          headers: {
            "content-type": "application/octet-stream",
            "content-disposition": `attachment; filename="${file.filename}"`,
            "cache-control": "no-store",
          },
        });
      },
      {
        signedIn: true,
        body: PortalOfflineBody,
        response: { 200: t.String({ description: "The license file: the offline token on one line" }), ...errors(401, 403, 404, 409) },
        detail: portal(
          "Download the offline activation as a license file",
          "For the owner and every accepted seat. A freshly signed token for the live offline activation's machine (the license's current support window and expiry), as an attachment `license-<fingerprint>.lic`. 404 NOT_FOUND without a live offline activation.",
        ),
      },
    );
}
