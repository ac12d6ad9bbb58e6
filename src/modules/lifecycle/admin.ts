import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { LifecycleCountsSchema } from "./model";
import { presentLifecycleCounts } from "./present";
import { runExpiryChecks } from "./service";

export function lifecycleAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/lifecycle/admin" })
    .use(guard)
    .post("/admin/system/run-expiry-checks", async ({ actor }) => ok(presentLifecycleCounts(await runExpiryChecks(deps, actor))), {
      scopes: ["admin"],
      response: { 200: Envelope(LifecycleCountsSchema), ...errors(401, 403) },
      detail: {
        tags: ["Admin: system"],
        summary: "Run the lifecycle pass now (expire trials, grace periods and long past_due; reminders, dunning, support emails)",
        description:
          "Runs the hourly `lifecycle` job pass on this node and returns what it did. Safe alongside the scheduled run or another node's: every action is guarded in its own transaction, so nothing is expired or sent twice.",
      },
    });
}
