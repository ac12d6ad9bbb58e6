import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { jobRunStateSchema } from "../../jobs/model";
import { LifecycleCountsSchema } from "./model";
import { LIFECYCLE } from "../../jobs/passes";
import { presentJobRunState } from "../../jobs/present";
import { startJobRun } from "../../jobs/service";

const LifecycleRunStateSchema = jobRunStateSchema(LifecycleCountsSchema, "LifecycleRunState");

export function lifecycleAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/lifecycle/admin" })
    .use(guard)
    .post(
      "/admin/system/run-expiry-checks",
      async ({ actor, set }) => {
        const run = await startJobRun(deps, actor, LIFECYCLE);
        // 202: the pass runs on in the background (at a million licenses it takes far longer than a
        // request may stay open); the client polls the run the Location names.
        set.status = 202;
        set.headers.location = `/api/v1/admin/system/jobs/${LIFECYCLE}/runs/${run.fence}`;
        return ok(presentJobRunState(run));
      },
      {
        scopes: ["admin"],
        response: { 202: Envelope(LifecycleRunStateSchema), ...errors(401, 403, 409) },
        detail: {
          tags: ["Admin: system"],
          summary: "Start the lifecycle pass now (expire trials, grace periods and long past_due; reminders, dunning, support emails)",
          description:
            "Starts the hourly `lifecycle` job pass in the background on this node, under the job's lease, and answers `202` with the run (`status: running`) and a `Location` to poll: `GET /admin/system/jobs/lifecycle/runs/{fence}` shows its counts (`result`, the LifecycleRun fields) once `status` is `ok`. While a run holds the lease (one started here, the scheduled one, or another node's), the answer is `202` with that run instead: a retried request never starts a second pass. `409` only when the lease changed hands repeatedly while answering; retry.",
        },
      },
    );
}
