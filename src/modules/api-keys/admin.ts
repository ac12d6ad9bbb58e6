import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { createApiKey, listApiKeys, revokeApiKey } from "./service";
import type { ApiKeyRecord } from "./repo";

// Literal union (t.UnionEnum would document "admin" as every item's default).
const ScopeSchema = t.Union([t.Literal("admin"), t.Literal("licenses:write"), t.Literal("releases:write"), t.Literal("read")]);
const ApiKeySchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    name: t.String(),
    key_prefix: t.String({ description: "First characters of the key, to recognise it" }),
    scopes: t.Array(ScopeSchema),
    product_id: t.Union([t.String({ format: "uuid" }), t.Null()]),
    created_at: t.String({ format: "date-time" }),
    last_used_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    revoked_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  },
  { title: "ApiKey" },
);

export function presentApiKey(r: ApiKeyRecord) {
  return {
    id: r.id,
    name: r.name,
    key_prefix: r.keyPrefix,
    scopes: r.scopes,
    product_id: r.productId,
    created_at: r.createdAt.toISOString(),
    last_used_at: r.lastUsedAt?.toISOString() ?? null,
    revoked_at: r.revokedAt?.toISOString() ?? null,
  };
}

const detail = (summary: string) => ({ tags: ["Admin: API keys"], summary });

export function apiKeyAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/api-keys/admin" })
    .use(guard)
    .post(
      "/admin/api-keys",
      async ({ actor, body, set }) => {
        const { record, key } = await createApiKey(deps, actor, {
          name: body.name,
          scopes: body.scopes,
          productId: body.product_id ?? null,
        });
        set.status = 201;
        return ok({ ...presentApiKey(record), key });
      },
      {
        scopes: ["admin"],
        body: t.Object(
          {
            name: t.String({ minLength: 1, maxLength: 200 }),
            scopes: t.Array(ScopeSchema, { maxItems: 4, description: "Empty means the key can do nothing (fail-closed)" }),
            product_id: t.Optional(t.Union([t.String({ format: "uuid" }), t.Null()])),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Envelope(t.Composite([ApiKeySchema, t.Object({ key: t.String({ description: "Shown once; store it now" }) })])),
          ...errors(401, 403),
        },
        detail: detail("Create an API key (the key is returned once)"),
      },
    )
    .get("/admin/api-keys", async ({ actor }) => ok({ items: (await listApiKeys(deps, actor)).map(presentApiKey) }), {
      scopes: ["admin"],
      response: { 200: Envelope(t.Object({ items: t.Array(ApiKeySchema) })), ...errors(401, 403) },
      detail: detail("List API keys"),
    })
    .post("/admin/api-keys/:id/revoke", async ({ actor, params }) => ok(presentApiKey(await revokeApiKey(deps, actor, params.id))), {
      scopes: ["admin"],
      params: t.Object({ id: t.String({ format: "uuid" }) }),
      response: { 200: Envelope(ApiKeySchema), ...errors(401, 403, 404) },
      detail: detail("Revoke an API key"),
    });
}
