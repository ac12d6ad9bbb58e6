import type { RouteFixtureContext, RouteFixtures } from "./types";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import { createEndpoint } from "../../../src/modules/webhooks/service";
import { newDelivery } from "../../../src/modules/webhooks/handler";

// Webhook endpoints scoped to a product belong to it (a key bound to it may manage them); admin only.
// A literal public address: nothing resolves a name, and nothing is ever sent (no pass runs here).
export const FIXTURE_WEBHOOK_URL = "https://93.184.216.34/keyward-hooks";

export async function fixtureEndpoint(ctx: RouteFixtureContext) {
  const { endpoint } = await createEndpoint(ctx.t.deps, SYSTEM_ACTOR, {
    url: FIXTURE_WEBHOOK_URL,
    description: "fixture",
    events: ["license.*"],
    enabled: true,
    productId: ctx.product.id,
    ed25519: false,
  });
  return endpoint;
}

async function fixtureDelivery(ctx: RouteFixtureContext) {
  const e = await fixtureEndpoint(ctx);
  const d = newDelivery({ endpointId: e.id, eventId: null, eventType: "webhook.test", body: '{"type":"webhook.test","timestamp":"2026-11-21T08:00:00.000Z","data":{}}', at: ctx.t.clock.now() });
  await ctx.t.deps.repos.webhooks.addDeliveries([d]);
  return d;
}

export default {
  "POST /api/v1/admin/webhooks": {
    scopes: [],
    build: ({ product }) => ({ body: { url: FIXTURE_WEBHOOK_URL, events: ["license.*", "release.published"], product_id: product.id, description: "fixture" } }),
  },
  "GET /api/v1/admin/webhooks": {
    scopes: [],
    build: ({ product }) => ({ query: { product_id: product.id, limit: "10" } }),
  },
  "GET /api/v1/admin/webhooks/:id": {
    scopes: [],
    build: async (ctx) => ({ params: { id: (await fixtureEndpoint(ctx)).id } }),
  },
  "PATCH /api/v1/admin/webhooks/:id": {
    scopes: [],
    build: async (ctx) => ({ params: { id: (await fixtureEndpoint(ctx)).id }, body: { description: "changed", events: ["*"] } }),
  },
  "DELETE /api/v1/admin/webhooks/:id": {
    scopes: [],
    build: async (ctx) => ({ params: { id: (await fixtureEndpoint(ctx)).id } }),
  },
  "POST /api/v1/admin/webhooks/:id/enable": {
    scopes: [],
    build: async (ctx) => ({ params: { id: (await fixtureEndpoint(ctx)).id } }),
  },
  "POST /api/v1/admin/webhooks/:id/disable": {
    scopes: [],
    build: async (ctx) => ({ params: { id: (await fixtureEndpoint(ctx)).id } }),
  },
  "POST /api/v1/admin/webhooks/:id/rotate-secret": {
    scopes: [],
    build: async (ctx) => ({ params: { id: (await fixtureEndpoint(ctx)).id } }),
  },
  "POST /api/v1/admin/webhooks/:id/test": {
    scopes: [],
    build: async (ctx) => ({ params: { id: (await fixtureEndpoint(ctx)).id } }),
  },
  "GET /api/v1/admin/webhooks/:id/deliveries": {
    scopes: [],
    build: async (ctx) => ({ params: { id: (await fixtureEndpoint(ctx)).id }, query: { status: "pending", limit: "10" } }),
  },
  "POST /api/v1/admin/webhooks/deliveries/:id/redeliver": {
    scopes: [],
    build: async (ctx) => ({ params: { id: (await fixtureDelivery(ctx)).id } }),
  },
  "GET /api/v1/admin/events": {
    scopes: [],
    build: ({ product }) => ({ query: { product_id: product.id, type: "license.*", limit: "10" } }),
  },
} satisfies RouteFixtures;
