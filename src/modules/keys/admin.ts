import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";

export function keyAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/keys/admin" }).use(guard).post(
    "/admin/signing-keys/rotate",
    async ({ actor }) => {
      const k = await deps.tokenKeys.rotate(actor);
      return ok({ kid: k.kid, public_key: k.publicKeyHex, created_at: k.createdAt.toISOString() });
    },
    {
      scopes: ["admin"],
      response: {
        200: Envelope(t.Object({ kid: t.String(), public_key: t.String(), created_at: t.String({ format: "date-time" }) })),
        ...errors(401, 403),
      },
      detail: {
        tags: ["Admin: keys"],
        summary: "Rotate the license-token signing key; the old key stays listed at /license/keys",
      },
    },
  );
}
