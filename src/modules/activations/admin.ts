import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Empty, Envelope, errors, ok } from "../../http/envelope";
import { removeActivation } from "./service";
import { ActivationParams } from "./model";

export function activationAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/activations/admin" }).use(guard).delete(
    "/admin/licenses/:id/activations/:activation_id",
    async ({ actor, params }) => {
      await removeActivation(deps, actor, params.id, params.activation_id);
      return ok({});
    },
    {
      scopes: ["licenses:write"],
      params: ActivationParams,
      response: { 200: Envelope(Empty), ...errors(401, 403, 404) },
      detail: { tags: ["Admin: licenses"], summary: "Remove an activation (frees its slot; audited)" },
    },
  );
}
