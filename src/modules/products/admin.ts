import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Empty, Envelope, errors, ok } from "../../http/envelope";
import { CreateProductBody, IdParams, ListProductsQuery, ProductSchema, UpdateProductBody } from "./model";
import { presentProduct } from "./present";
import { createProduct, deleteProduct, getProduct, listProducts, updateProduct } from "./service";

const detail = (summary: string) => ({ tags: ["Admin: products"], summary });
// Reads are open to every scope that needs a product id to do its job (licenses:write, releases:write).
const READ = ["licenses:write", "releases:write"] as const;

export function productAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/products/admin" })
    .use(guard)
    .get("/admin/products", async ({ actor, query }) => ok({ items: (await listProducts(deps, actor, query.product_id)).map(presentProduct) }), {
      scopes: READ,
      query: ListProductsQuery,
      response: { 200: Envelope(t.Object({ items: t.Array(ProductSchema) })), ...errors(401, 403) },
      detail: detail("List products (a product-bound key sees only its product)"),
    })
    .post(
      "/admin/products",
      async ({ actor, body, set }) => {
        const p = await createProduct(deps, actor, {
          name: body.name,
          slug: body.slug,
          distribution: body.distribution,
          minimumSupportedVersion: body.minimum_supported_version,
          minimumSupportedMessage: body.minimum_supported_message,
        });
        set.status = 201;
        return ok(presentProduct(p));
      },
      {
        scopes: ["admin"],
        body: CreateProductBody,
        response: { 201: Envelope(ProductSchema), ...errors(401, 403, 409) },
        detail: detail("Create a product"),
      },
    )
    .get("/admin/products/:id", async ({ actor, params }) => ok(presentProduct(await getProduct(deps, actor, params.id))), {
      scopes: READ,
      params: IdParams,
      response: { 200: Envelope(ProductSchema), ...errors(401, 403, 404) },
      detail: detail("Fetch a product"),
    })
    .patch(
      "/admin/products/:id",
      async ({ actor, params, body }) =>
        ok(
          presentProduct(
            await updateProduct(deps, actor, params.id, {
              name: body.name,
              slug: body.slug,
              distribution: body.distribution,
              minimumSupportedVersion: body.minimum_supported_version,
              minimumSupportedMessage: body.minimum_supported_message,
            }),
          ),
        ),
      {
        scopes: ["admin"],
        params: IdParams,
        body: UpdateProductBody,
        response: { 200: Envelope(ProductSchema), ...errors(401, 403, 404, 409) },
        detail: detail("Update a product"),
      },
    )
    .delete(
      "/admin/products/:id",
      async ({ actor, params }) => {
        await deleteProduct(deps, actor, params.id);
        return ok({});
      },
      {
        scopes: ["admin"],
        params: IdParams,
        response: { 200: Envelope(Empty), ...errors(401, 403, 404, 409) },
        detail: detail("Delete a product with no plans, add-ons, licenses or releases"),
      },
    );
}
