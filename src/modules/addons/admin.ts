import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Empty, Envelope, errors, ok } from "../../http/envelope";
import { AddonIdParams, AddonSchema, CreateAddonBody, ListAddonsQuery, UpdateAddonBody } from "./model";
import { presentAddon } from "./present";
import { createAddon, deleteAddon, getAddon, listAddons, updateAddon } from "./service";

const detail = (summary: string) => ({ tags: ["Admin: add-ons"], summary });
// COMMON rule 8: a licenses:write key may read add-ons (it attaches them to licenses).
const READ = ["licenses:write"] as const;

export function addonAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/addons/admin" })
    .use(guard)
    .post(
      "/admin/addons",
      async ({ actor, body, set }) => {
        const addon = await createAddon(deps, actor, {
          productId: body.product_id,
          name: body.name,
          featureName: body.feature_name,
          valueType: body.value_type,
          value: body.value,
          quotaLimit: body.quota_limit,
          quotaPeriod: body.quota_period,
        });
        set.status = 201;
        return ok(presentAddon(addon));
      },
      {
        scopes: ["admin"],
        body: CreateAddonBody,
        response: { 201: Envelope(AddonSchema), ...errors(401, 403, 409) },
        detail: detail("Create an add-on (one extra feature sold separately)"),
      },
    )
    .get("/admin/addons", async ({ actor, query }) => ok({ items: (await listAddons(deps, actor, query.product_id)).map(presentAddon) }), {
      scopes: READ,
      query: ListAddonsQuery,
      response: { 200: Envelope(t.Object({ items: t.Array(AddonSchema) })), ...errors(401, 403) },
      detail: detail("List add-ons, optionally of one product; a product-bound key sees only its product"),
    })
    .get("/admin/addons/:id", async ({ actor, params }) => ok(presentAddon(await getAddon(deps, actor, params.id))), {
      scopes: READ,
      params: AddonIdParams,
      response: { 200: Envelope(AddonSchema), ...errors(401, 403, 404) },
      detail: detail("Fetch an add-on"),
    })
    .patch(
      "/admin/addons/:id",
      async ({ actor, params, body }) =>
        ok(
          presentAddon(
            await updateAddon(deps, actor, params.id, {
              name: body.name,
              featureName: body.feature_name,
              valueType: body.value_type,
              value: body.value,
              quotaLimit: body.quota_limit,
              quotaPeriod: body.quota_period,
            }),
          ),
        ),
      {
        scopes: ["admin"],
        params: AddonIdParams,
        body: UpdateAddonBody,
        response: { 200: Envelope(AddonSchema), ...errors(401, 403, 404, 409) },
        detail: detail("Update an add-on (licenses that have it see the change at once)"),
      },
    )
    .delete(
      "/admin/addons/:id",
      async ({ actor, params }) => {
        await deleteAddon(deps, actor, params.id);
        return ok({});
      },
      {
        scopes: ["admin"],
        params: AddonIdParams,
        response: { 200: Envelope(Empty), ...errors(401, 403, 404, 409) },
        detail: detail("Delete an add-on no license has attached (409 CONFLICT otherwise)"),
      },
    );
}
