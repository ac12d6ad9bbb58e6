// The event catalogue's JSON Schemas (src/modules/outbox/event-schemas.ts): the OpenAPI document
// lists one webhook per event type with its body, and events recorded by real requests validate
// against those schemas (a type-level check keeps the schemas equal to the TypeScript catalogue; this
// checks the bytes actually written).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { createTestApp, type TestApp } from "../../support/app";
import { makeCatalog, makePlan } from "../../support/factories";
import { EVENT_TYPES, type EventType } from "../../../src/modules/outbox/events";
import { EVENT_SCHEMAS, eventBodySchema } from "../../../src/modules/outbox/event-schemas";
import { DAY } from "../../../src/shared/clock";

const V1 = "/api/v1";
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("event schemas", () => {
  test("the OpenAPI document has one webhook per event type, whose body is {type, timestamp, data}", async () => {
    const doc = (await t.request("GET", `${V1}/openapi.json`)).body as { webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: any }> } } }> };
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const schema = doc.webhooks[type]!.post.requestBody.content["application/json"]!.schema;
      expect({ type, required: schema.required, literal: schema.properties.type.const }).toEqual({ type, required: ["type", "timestamp", "data"], literal: type });
    }
  });

  test("events written by real requests validate against their schemas", async () => {
    const { key, license, product, plan } = await makeCatalog(t.deps, { maxActivations: 3, maxSeats: 3 });
    const other = await makePlan(t.deps, product.id);
    const ok = async (method: string, path: string, body?: unknown, cookie?: string) => {
      const res = await t.request(method, `${V1}${path}`, { body, ...(cookie ? { cookie } : {}) });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
      return res;
    };
    await ok("POST", "/license/activate", { license_key: key, identifier: "dev-1" });
    await ok("POST", "/license/activate", { license_key: key, identifier: "dev-2" });
    await ok("POST", "/license/deactivate", { license_key: key, identifier: "dev-2" });
    await ok("POST", `/admin/licenses/${license.id}/offline-token`, { identifier: "air-gapped-1" });
    await ok("POST", `/admin/licenses/${license.id}/valid-until`, { valid_until: new Date(t.clock.nowMs() + 30 * DAY).toISOString() });
    await ok("POST", `/admin/licenses/${license.id}/change-plan`, { plan_id: other.id });
    await ok("POST", `/admin/licenses/${license.id}/suspend`);
    await ok("POST", `/admin/licenses/${license.id}/reinstate`);
    const owner = await t.signIn(license.email);
    const seat = await ok("POST", "/portal/seats/add", { license_key: key, email: "mate@example.com" }, owner);
    await ok("POST", "/portal/seats/remove", { license_key: key, seat_id: seat.body.data.seat_id }, owner);
    await ok("POST", `/admin/licenses/${license.id}/revoke`);
    void plan;

    const rows = await t.exec<{ topic: string; payload: unknown }>("SELECT topic, payload FROM outbox WHERE kind = 'event'");
    const seen = new Set<string>();
    for (const row of rows) {
      const body = typeof row.payload === "string" ? JSON.parse(row.payload) : row.payload;
      const type = row.topic as EventType;
      expect(EVENT_TYPES).toContain(type);
      const errors = [...Value.Errors(eventBodySchema(type), body)].map((e) => `${e.path}: ${e.message}`);
      expect({ type, errors }).toEqual({ type, errors: [] });
      expect(Value.Check(EVENT_SCHEMAS[type], body.data)).toBe(true);
      seen.add(type);
    }
    expect([...seen].sort()).toEqual(
      [
        "activation.created",
        "activation.deleted",
        "license.created",
        "license.plan_changed",
        "license.reinstated",
        "license.revoked",
        "license.suspended",
        "license.updated",
        "offline_token.issued",
        "seat.invited",
        "seat.removed",
      ].sort(),
    );
  });

  test("a schema refuses a body with a missing or extra field (it can fail)", () => {
    const good = { type: "seat.accepted", timestamp: "2026-11-23T00:00:00.000Z", data: { seat_id: "s", license_id: "l", product_id: "p", role: "member", user_id: "u" } };
    expect(Value.Check(eventBodySchema("seat.accepted"), good)).toBe(true);
    expect(Value.Check(eventBodySchema("seat.accepted"), { ...good, data: { ...good.data, user_id: undefined } })).toBe(false);
    expect(Value.Check(eventBodySchema("seat.accepted"), { ...good, data: { ...good.data, email: "x@example.com" } })).toBe(false);
  });
});
