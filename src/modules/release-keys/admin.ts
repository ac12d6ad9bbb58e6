import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { ProductIdParams, ReleaseKeySchema } from "./model";
import { presentReleaseKey } from "./present";
import { listReleaseKeys, rotateReleaseKey } from "./service";

const detail = (summary: string) => ({ tags: ["Admin: release signing keys"], summary });

export function releaseKeyAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/release-keys/admin" })
    .use(guard)
    .get(
      "/admin/products/:id/signing-keys",
      async ({ actor, params }) => ok({ items: (await listReleaseKeys(deps, actor, params.id)).map(presentReleaseKey) }),
      {
        // A releases:write key needs the public keys to configure the apps it publishes for.
        scopes: ["releases:write"],
        params: ProductIdParams,
        response: { 200: Envelope(t.Object({ items: t.Array(ReleaseKeySchema) })), ...errors(401, 403, 404) },
        detail: detail("List the product's release signing keys (generates the first one) in Sparkle, Tauri/minisign and PEM forms"),
      },
    )
    .post(
      "/admin/products/:id/signing-keys/rotate",
      async ({ actor, params }) => ok(presentReleaseKey(await rotateReleaseKey(deps, actor, params.id))),
      {
        scopes: ["admin"],
        params: ProductIdParams,
        response: { 200: Envelope(ReleaseKeySchema), ...errors(401, 403, 404) },
        detail: detail("Rotate the product's release signing key; the old key stays listed as retired"),
      },
    );
}
