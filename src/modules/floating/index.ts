import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { idempotent } from "../../http/idempotency";
import { checkin, checkout, heartbeat, type FloatingView } from "./service";
import { CheckinResponse, floatingModels, SessionResponse } from "./model";
import { presentCheckin, presentSession } from "./present";

const detail = (summary: string, description: string) => ({ tags: ["License"], summary, description });

export function floatingRoutes(deps: Deps) {
  const m = floatingModels(deps.config.identifierMaxLength);
  return new Elysia({ name: "keyward/floating" })
    .post(
      "/license/floating/checkout",
      async ({ body, request }) =>
        idempotent(
          deps,
          request,
          "license.floating.checkout",
          body.license_key,
          (record) =>
            checkout(deps, { licenseKey: body.license_key, productId: body.product_id, identifier: body.identifier, label: body.label ?? null }, record),
          (view: FloatingView) => ok(presentSession(view)),
        ),
      {
        body: m.CheckoutBody,
        response: { 200: Envelope(SessionResponse), ...errors(403, 404, 409, 422) },
        detail: detail(
          "Check out a floating session (or refresh the identifier's live one)",
          "Atomic against the plan's max_activations: 409 FLOATING_LIMIT with details {active_sessions, max_sessions} when every seat is taken. 403 FORBIDDEN on a plan without floating. Honors Idempotency-Key.",
        ),
      },
    )
    .post(
      "/license/floating/heartbeat",
      async ({ body }) => ok(presentSession(await heartbeat(deps, { licenseKey: body.license_key, productId: body.product_id, identifier: body.identifier }))),
      {
        body: m.SessionBody,
        response: { 200: Envelope(SessionResponse), ...errors(404) },
        detail: detail(
          "Extend a live floating session by the plan's floating_timeout",
          "An expired session is never revived: 404 LICENSE_NOT_FOUND, check out again.",
        ),
      },
    )
    .post(
      "/license/floating/checkin",
      async ({ body }) => ok(presentCheckin(await checkin(deps, { licenseKey: body.license_key, productId: body.product_id, identifier: body.identifier }))),
      {
        body: m.SessionBody,
        response: { 200: Envelope(CheckinResponse), ...errors(404) },
        detail: detail("Release a floating session", "404 LICENSE_NOT_FOUND when there is no live session (already released or expired)."),
      },
    );
}
