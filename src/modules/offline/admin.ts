// POST /admin/licenses/{id}/offline-token (spec: Offline token issue). The response is in the usual
// envelope ({success, data}), like every other Keyward response (the spec leaves it open).
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { LicenseIdParams } from "../license-admin/model";
import { toInstant } from "../../http/common-schemas";
import { OfflineActivationListSchema, OfflineActivationParams, OfflineActivationSchema, offlineModels, OfflineTokenSchema } from "./model";
import { presentOfflineActivation, presentOfflineToken } from "./present";
import { clearOfflineActivation, issueOfflineToken, listOfflineActivations } from "./service";

export function offlineAdminRoutes(deps: Deps, guard: AdminGuard) {
  const m = offlineModels(deps.config.identifierMaxLength);
  return new Elysia({ name: "keyward/offline/admin" })
    .use(guard)
    .post(
      "/admin/licenses/:id/offline-token",
      async ({ actor, params, body }) => {
        const expiresAt = body.expires_at ? toInstant("expires_at", body.expires_at) : null;
        return ok(presentOfflineToken(await issueOfflineToken(deps, actor, params.id, { identifier: body.identifier, expiresAt })));
      },
      {
        scopes: ["licenses:write"],
        params: LicenseIdParams,
        body: m.IssueOfflineTokenBody,
        response: { 200: Envelope(OfflineTokenSchema), ...errors(401, 403, 404, 409) },
        detail: {
          tags: ["Admin: licenses"],
          summary: "Issue a machine-bound offline token (active or trialing licenses only; records no activation)",
          description:
            "Signs a token with the active token key (`kid`), bound to the machine by `fpr` = first 16 hex of SHA-256(\"<identifier>:<product_id>\"). " +
            "`expires_at` empty or omitted: perpetual (`exp` = 0). A license that is not active or trialing (or is past its expiry and grace) answers 409 INVALID_TRANSITION. " +
            "Offline tokens cannot be revoked; the issue is audited and recorded as the `offline_token.issued` event.",
        },
      },
    )
    .get(
      "/admin/licenses/:id/offline-activations",
      async ({ actor, params }) => ok({ items: (await listOfflineActivations(deps, actor, params.id)).map(presentOfflineActivation) }),
      {
        scopes: ["licenses:write"],
        params: LicenseIdParams,
        response: { 200: Envelope(OfflineActivationListSchema), ...errors(401, 403, 404) },
        detail: {
          tags: ["Admin: licenses"],
          summary: "List the license's self-service offline activations (portal), cleared ones included, newest first",
        },
      },
    )
    .delete(
      "/admin/licenses/:id/offline-activations/:activation_id",
      async ({ actor, params }) => ok(presentOfflineActivation(await clearOfflineActivation(deps, actor, params.id, params.activation_id))),
      {
        scopes: ["licenses:write"],
        params: OfflineActivationParams,
        response: { 200: Envelope(OfflineActivationSchema), ...errors(401, 403, 404) },
        detail: {
          tags: ["Admin: licenses"],
          summary: "Clear the self-service offline activation (only admins can); the license may then make a new one",
          description:
            "The row is kept with `cleared_at`. From then on an online verify from that machine answers 404 LICENSE_NOT_FOUND (unless it is also activated online). " +
            "Audited (`license.offline_activation.clear`); records the `offline_activation.cleared` event. A token already on the machine keeps working offline: offline tokens cannot be revoked.",
        },
      },
    );
}
