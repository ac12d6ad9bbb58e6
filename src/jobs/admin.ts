import { Elysia } from "elysia";
import { t } from "../http/schema";
import type { Deps } from "../deps";
import type { AdminGuard } from "../http/auth";
import { Envelope, errors, ok } from "../http/envelope";
import { JobNameParams, JobRunParams, JobRunSchema, JobRunStateSchema, JobStatusSchema } from "./model";
import { presentJobRun, presentJobRunState, presentJobStatus } from "./present";
import { getJobRun, listJobs, runJobNow, startJobRun } from "./service";
import { findPass } from "./runner";

const detail = (summary: string) => ({ tags: ["Admin: system"], summary });

export function jobAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/jobs/admin" })
    .use(guard)
    .get("/admin/system/jobs", async ({ actor }) => ok({ items: (await listJobs(deps, actor)).map(presentJobStatus) }), {
      scopes: ["admin"],
      response: { 200: Envelope(t.Object({ items: t.Array(JobStatusSchema) })), ...errors(401, 403) },
      detail: detail("Background job passes: schedule, lease holder, last slot and last result"),
    })
    .post(
      "/admin/system/jobs/:name/run",
      async ({ actor, params, set }) => {
        if (findPass(params.name).background) {
          // A long pass (lifecycle) runs on in the background, as POST /admin/system/run-expiry-checks
          // starts it: the client polls the run the Location names, and a retry never starts a second.
          const run = await startJobRun(deps, actor, params.name);
          set.status = 202;
          set.headers.location = `/api/v1/admin/system/jobs/${params.name}/runs/${run.fence}`;
          return ok(presentJobRunState(run));
        }
        return ok(presentJobRun(await runJobNow(deps, actor, params.name)));
      },
      {
        scopes: ["admin"],
        params: JobNameParams,
        response: { 200: Envelope(JobRunSchema), 202: Envelope(JobRunStateSchema), ...errors(401, 403, 404, 409) },
        detail: {
          ...detail("Run a job pass now on this node: its result, or (a long pass) the run started in the background"),
          description:
            "A short pass runs at once and the answer (`200`) is its result; `409` while another run holds its lease. A pass that can outlast a request (`lifecycle`) starts in the background instead: `202` with the run (`status: running`) and a `Location` to poll (`GET /admin/system/jobs/{name}/runs/{fence}`), or, while a run holds the lease, `202` with that run (a retry never starts a second pass).",
        },
      },
    )
    .get("/admin/system/jobs/:name/runs/:fence", async ({ actor, params }) => ok(presentJobRunState(await getJobRun(deps, actor, params.name, Number(params.fence)))), {
      scopes: ["admin"],
      params: JobRunParams,
      response: { 200: Envelope(JobRunStateSchema), ...errors(401, 403, 404) },
      detail: {
        ...detail("One run of a job pass: running, finished (its counts or its error) or abandoned"),
        description:
          "Poll this after `POST /admin/system/run-expiry-checks` or a `202` from `POST /admin/system/jobs/{name}/run` (each names the run and its `Location`). Only the job's latest run is on record: once a later run has started, an earlier fence is 404.",
      },
    });
}
