// Public routes: activate, verify, deactivate. No API key: license_key in the body is the credential.
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { requestContext } from "../../http/request-context";
import { idempotent } from "../../http/idempotency";
import { activate, deactivate, verify, type ActivateResult } from "./service";
import { activationModels, ActivateResponse, DeactivateResponse, VerifyResponse } from "./model";
import { presentActivate, presentVerify } from "./present";

const detail = (summary: string, description?: string) => ({ tags: ["License"], summary, description });

export function activationRoutes(deps: Deps) {
  const m = activationModels(deps.config.identifierMaxLength);
  return new Elysia({ name: "keyward/activations" })
    .post(
      "/license/activate",
      async ({ body, request }) =>
        idempotent(
          deps,
          request,
          "license.activate",
          body.license_key,
          (record) =>
            activate(
              deps,
              {
                licenseKey: body.license_key,
                productId: body.product_id,
                identifier: body.identifier,
                identifierType: body.identifier_type ?? "device",
                label: body.label ?? null,
                ip: requestContext(request).ip,
              },
              record,
            ),
          (result: ActivateResult) => ok(presentActivate(result)),
        ),
      {
        body: m.ActivateBody,
        response: { 200: Envelope(ActivateResponse), ...errors(403, 404, 409, 422, 429) },
        detail: detail(
          "Activate an identifier on a license",
          "Consumes a slot (status activated) or reuses the identifier's slot (already_activated). 409 ACTIVATION_LIMIT when full, 403 LICENSE_INACTIVE for an unusable license, 404 LICENSE_NOT_FOUND for unknown keys; failures feed a per-address lockout (429 LOCKED_OUT). Honors Idempotency-Key.",
        ),
      },
    )
    .post(
      "/license/verify",
      async ({ body }) => ok(presentVerify(await verify(deps, { licenseKey: body.license_key, productId: body.product_id, identifier: body.identifier }))),
      {
        body: m.VerifyBody,
        response: { 200: Envelope(VerifyResponse), ...errors(404) },
        detail: detail(
          "Verify an activated identifier and get a fresh signed token",
          "Every failure (unknown or malformed key, another product, identifier not activated, unusable license) is the same 404 LICENSE_NOT_FOUND.",
        ),
      },
    )
    .post(
      "/license/deactivate",
      async ({ body }) => {
        await deactivate(deps, { licenseKey: body.license_key, productId: body.product_id, identifier: body.identifier });
        return ok({ status: "deactivated" as const });
      },
      {
        body: m.VerifyBody,
        response: { 200: Envelope(DeactivateResponse), ...errors(404) },
        detail: detail("Deactivate an identifier and free its slot", "Every failure is the same 404 LICENSE_NOT_FOUND."),
      },
    );
}
