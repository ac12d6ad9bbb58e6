import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { Uuid } from "../license-api/model";
import { adminFloatingSessions } from "./service";
import { FloatingSessionSchema } from "./model";
import { presentFloatingSession } from "./present";

export function floatingAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/floating/admin" }).use(guard).get(
    "/admin/licenses/:id/floating-sessions",
    async ({ actor, params }) => ok({ items: (await adminFloatingSessions(deps, actor, params.id)).map(presentFloatingSession) }),
    {
      scopes: ["licenses:write"],
      params: t.Object({ id: Uuid }),
      response: { 200: Envelope(t.Object({ items: t.Array(FloatingSessionSchema) })), ...errors(401, 403, 404) },
      detail: { tags: ["Admin: licenses"], summary: "Live floating sessions of a license" },
    },
  );
}
