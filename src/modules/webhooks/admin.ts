import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Empty, Envelope, errors, ok } from "../../http/envelope";
import { toInstant } from "../../http/common-schemas";
import {
  CreateEndpointBody,
  DeliveryIdParams,
  DeliveryListQuery,
  DeliverySchema,
  EndpointIdParams,
  EndpointListQuery,
  EndpointSchema,
  EndpointWithSecretSchema,
  EventListQuery,
  EventSchema,
  UpdateEndpointBody,
} from "./model";
import { presentDelivery, presentEndpoint, presentEvent } from "./present";
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  listEvents,
  redeliver,
  rotateSecret,
  sendTestEvent,
  setEndpointEnabled,
  updateEndpoint,
} from "./service";

const detail = (summary: string, description?: string) => ({ tags: ["Admin: webhooks"], summary, ...(description ? { description } : {}) });
const Page = <S extends Parameters<typeof t.Array>[0]>(item: S) => t.Object({ items: t.Array(item), next_cursor: t.Union([t.String(), t.Null()]) });
const SCOPE_NOTE =
  "An endpoint with a product_id belongs to that product (keys bound to it may manage it); one without receives every product's events and is system-wide (403 PRODUCT_SCOPE_MISMATCH for bound keys).";

export function webhookAdminRoutes(deps: Deps, guard: AdminGuard) {
  const now = () => deps.clock.now();
  return new Elysia({ name: "keyward/webhooks/admin" })
    .use(guard)
    .post(
      "/admin/webhooks",
      async ({ actor, body, set }) => {
        const { endpoint, secret } = await createEndpoint(deps, actor, {
          url: body.url,
          description: body.description ?? "",
          events: body.events,
          enabled: body.enabled ?? true,
          productId: body.product_id ?? null,
          ed25519: body.ed25519 ?? false,
        });
        set.status = 201;
        return ok({ ...presentEndpoint(endpoint, now()), secret });
      },
      {
        scopes: ["admin"],
        body: CreateEndpointBody,
        response: { 201: Envelope(EndpointWithSecretSchema), ...errors(400, 401, 403) },
        detail: detail(
          "Register a webhook endpoint (the whsec_ secret is returned once)",
          `Refuses private, loopback and link-local targets (literal or resolved) unless WEBHOOK_ALLOW_PRIVATE=true: 400 VALIDATION_ERROR on url. ${SCOPE_NOTE}`,
        ),
      },
    )
    .get(
      "/admin/webhooks",
      async ({ actor, query }) => {
        const page = await listEndpoints(deps, actor, { productId: query.product_id, cursor: query.cursor, limit: query.limit ?? 50 });
        return ok({ items: page.items.map((e) => presentEndpoint(e, now())), next_cursor: page.nextCursor });
      },
      {
        scopes: ["admin"],
        query: EndpointListQuery,
        response: { 200: Envelope(Page(EndpointSchema)), ...errors(401, 403) },
        detail: detail("List webhook endpoints, newest first", "A product-bound key sees its product's endpoints only. Never shows secrets."),
      },
    )
    .get("/admin/webhooks/:id", async ({ actor, params }) => ok(presentEndpoint(await getEndpoint(deps, actor, params.id), now())), {
      scopes: ["admin"],
      params: EndpointIdParams,
      response: { 200: Envelope(EndpointSchema), ...errors(401, 403, 404) },
      detail: detail("A webhook endpoint (never its secret)"),
    })
    .patch("/admin/webhooks/:id", async ({ actor, params, body }) => ok(presentEndpoint(await updateEndpoint(deps, actor, params.id, { url: body.url, description: body.description, events: body.events, productId: body.product_id, ed25519: body.ed25519 }), now())), {
      scopes: ["admin"],
      params: EndpointIdParams,
      body: UpdateEndpointBody,
      response: { 200: Envelope(EndpointSchema), ...errors(400, 401, 403, 404) },
      detail: detail("Change a webhook endpoint's URL, filters, description, product or Ed25519 key", SCOPE_NOTE),
    })
    .delete(
      "/admin/webhooks/:id",
      async ({ actor, params }) => {
        await deleteEndpoint(deps, actor, params.id);
        return ok({});
      },
      {
        scopes: ["admin"],
        params: EndpointIdParams,
        response: { 200: Envelope(Empty), ...errors(401, 403, 404) },
        detail: detail("Delete a webhook endpoint and its delivery log"),
      },
    )
    .post("/admin/webhooks/:id/enable", async ({ actor, params }) => ok(presentEndpoint(await setEndpointEnabled(deps, actor, params.id, true), now())), {
      scopes: ["admin"],
      params: EndpointIdParams,
      response: { 200: Envelope(EndpointSchema), ...errors(401, 403, 404) },
      detail: detail("Enable a webhook endpoint", "Clears the failure count; deliveries that waited while it was disabled are sent."),
    })
    .post("/admin/webhooks/:id/disable", async ({ actor, params }) => ok(presentEndpoint(await setEndpointEnabled(deps, actor, params.id, false), now())), {
      scopes: ["admin"],
      params: EndpointIdParams,
      response: { 200: Envelope(EndpointSchema), ...errors(401, 403, 404) },
      detail: detail("Disable a webhook endpoint", "Nothing is sent to it while disabled; its pending deliveries wait."),
    })
    .post(
      "/admin/webhooks/:id/rotate-secret",
      async ({ actor, params }) => {
        const { endpoint, secret } = await rotateSecret(deps, actor, params.id);
        return ok({ ...presentEndpoint(endpoint, now()), secret });
      },
      {
        scopes: ["admin"],
        params: EndpointIdParams,
        response: { 200: Envelope(EndpointWithSecretSchema), ...errors(401, 403, 404) },
        detail: detail(
          "Replace the signing secret (the new one is returned once)",
          "For 24 hours every delivery carries two v1 signatures, one per secret, so receivers can switch over.",
        ),
      },
    )
    .post(
      "/admin/webhooks/:id/test",
      async ({ actor, params, set }) => {
        set.status = 202;
        return ok(presentDelivery(await sendTestEvent(deps, actor, params.id)));
      },
      {
        scopes: ["admin"],
        params: EndpointIdParams,
        response: { 202: Envelope(DeliverySchema), ...errors(401, 403, 404, 409) },
        detail: detail(
          "Send a webhook.test event to this endpoint only",
          "Queued as a delivery (whatever the endpoint's filters) and sent by the next deliver-webhooks pass; follow it in the delivery log. 409 WEBHOOK_DISABLED for a disabled endpoint.",
        ),
      },
    )
    .get(
      "/admin/webhooks/:id/deliveries",
      async ({ actor, params, query }) => {
        const page = await listDeliveries(deps, actor, params.id, { status: query.status, eventType: query.event_type, cursor: query.cursor, limit: query.limit ?? 50 });
        return ok({ items: page.items.map(presentDelivery), next_cursor: page.nextCursor });
      },
      {
        scopes: ["admin"],
        params: EndpointIdParams,
        query: DeliveryListQuery,
        response: { 200: Envelope(Page(DeliverySchema)), ...errors(401, 403, 404) },
        detail: detail("An endpoint's delivery log, newest first", "Attempts, status, last response code, latency and the first 2 KB of the last response body. Cursor pagination."),
      },
    )
    .post("/admin/webhooks/deliveries/:id/redeliver", async ({ actor, params }) => ok(presentDelivery(await redeliver(deps, actor, params.id))), {
      scopes: ["admin"],
      params: DeliveryIdParams,
      response: { 200: Envelope(DeliverySchema), ...errors(401, 403, 404, 409) },
      detail: detail(
        "Send a delivery again",
        "Same webhook-id and body, a fresh timestamp and signature; due at once whatever its status. 409 WEBHOOK_DISABLED when its endpoint is disabled.",
      ),
    })
    .get(
      "/admin/events",
      async ({ actor, query }) => {
        const page = await listEvents(deps, actor, {
          type: query.type,
          since: toInstant("since", query.since),
          until: toInstant("until", query.until),
          productId: query.product_id,
          cursor: query.cursor,
          limit: query.limit ?? 50,
        });
        return ok({ items: page.items.map(presentEvent), next_cursor: page.nextCursor });
      },
      {
        scopes: ["admin"],
        query: EventListQuery,
        response: { 200: Envelope(Page(EventSchema)), ...errors(401, 403) },
        detail: detail(
          "Recorded events, newest first",
          "Every event Keyward recorded (docs/events.md), whether or not an endpoint received it. Filters: type (exact or prefix.*), since/until (recorded at), product_id. A product-bound key sees its product's events only.",
        ),
      },
    );
}
