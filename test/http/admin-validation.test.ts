// Every admin route that takes a JSON body refuses bad bodies with 400 VALIDATION_ERROR in the
// envelope, naming the offending field in details.fields (DECISIONS: error codes). Routes come from
// the route table and their body schemas from the route hooks, so new routes are covered as they
// appear; path params come from the route fixtures (test/support/route-fixtures).
import { afterAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import type { TSchema } from "@sinclair/typebox";
import { createTestApp, type TestResponse } from "../support/app";
import { adminRoutes, buildRequest, freshContext, loadRouteFixtures, type AdminRoute } from "../support/route-fixtures";

const t = await createTestApp();
afterAll(() => t.close());

const fixtures = await loadRouteFixtures();
const withBody = adminRoutes(await t.app.routes()).filter((r) => typeof r.hooks.body === "object" && r.hooks.body !== null);

interface ObjectSchema extends TSchema {
  type: "object";
  properties?: Record<string, TSchema>;
  required?: string[];
  additionalProperties?: boolean | TSchema;
  minProperties?: number;
}

/** Values of every JSON type; for each property the first one its schema refuses is used. */
const CANDIDATES: unknown[] = [12345, "not-a-valid-value", true, { zz: 1 }, [1, 2], null, -1.5];

function expectValidationError(res: TestResponse, field: string | null, what: string) {
  if (res.status !== 400 || res.body?.error?.code !== "VALIDATION_ERROR") {
    throw new Error(`${what}: expected 400 VALIDATION_ERROR, got ${res.status} ${res.text.slice(0, 300)}`);
  }
  expect(res.body.success).toBe(false);
  const fields = res.body.error.details?.fields as Record<string, string> | undefined;
  expect(typeof fields).toBe("object");
  expect(Object.keys(fields!).length).toBeGreaterThan(0);
  if (field !== null) {
    const named = Object.keys(fields!).some((k) => k === field || k.startsWith(`${field}.`));
    if (!named) throw new Error(`${what}: details.fields should name "${field}", got ${JSON.stringify(fields)}`);
  }
}

const validRequest = async (route: AdminRoute) => await buildRequest(route, fixtures.get(route.key)!, await freshContext(t));

test("admin routes with JSON bodies exist (the loop below is not empty)", () => {
  expect(withBody.map((r) => r.key)).toContain("POST /api/v1/admin/products");
});

for (const route of withBody) {
  const schema = route.hooks.body as ObjectSchema;
  if (!fixtures.has(route.key)) {
    // One loud failure per route; the auth matrix lists every missing fixture too.
    test(`${route.key} has a route fixture (needed for its params and a valid body)`, () => {
      throw new Error(`${route.key} has no fixture in test/support/route-fixtures/*.ts`);
    });
    continue;
  }

  describe(route.key, () => {
    const send = async (body: unknown, opts: { raw?: boolean; headers?: Record<string, string> } = {}) => {
      const req = await validRequest(route);
      return t.request(route.method, req.path, { body, key: t.adminKey, ...opts });
    };

    test("the body schema is a closed object", () => {
      expect(schema.type).toBe("object");
      // Unknown fields are refused rather than silently dropped (a typo must not look like success).
      expect(schema.additionalProperties).toBe(false);
    });

    test("malformed JSON → 400", async () => {
      expectValidationError(await send('{"name": ', { raw: true }), "body", "malformed JSON");
    });

    test("a JSON array instead of an object → 400", async () => {
      expectValidationError(await send([]), null, "array body");
    });

    test("a wrong content type → 400", async () => {
      const res = await send("name=x", { raw: true, headers: { "content-type": "text/plain" } });
      expectValidationError(res, "content-type", "text/plain body");
    });

    test("an unknown field → 400 naming it", async () => {
      const { body } = await validRequest(route);
      expectValidationError(await send({ ...(body as object), zz_unknown_field: 1 }), "zz_unknown_field", "unknown field");
    });

    for (const name of schema.required ?? []) {
      test(`missing required "${name}" → 400 naming it`, async () => {
        const { body } = await validRequest(route);
        const { [name]: _, ...rest } = body as Record<string, unknown>;
        expectValidationError(await send(rest), name, `without ${name}`);
      });
    }

    if ((schema.required ?? []).length === 0 && (schema.minProperties ?? 0) > 0) {
      test("an empty object → 400", async () => {
        expectValidationError(await send({}), null, "empty object");
      });
    }

    for (const [name, propSchema] of Object.entries(schema.properties ?? {})) {
      const wrong = CANDIDATES.find((c) => !Value.Check(propSchema, c));
      test(`"${name}" with a value of the wrong type (${JSON.stringify(wrong)}) → 400 naming it`, async () => {
        expect(wrong).toBeDefined();
        const { body } = await validRequest(route);
        expectValidationError(await send({ ...(body as object), [name]: wrong }), name, `${name}=${JSON.stringify(wrong)}`);
      });
    }
  });
}
