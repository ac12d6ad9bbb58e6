import { Elysia } from "elysia";
import { t } from "../http/schema";
import type { Deps } from "../deps";
import type { AdminGuard } from "../http/auth";
import { Envelope, errors, ok } from "../http/envelope";
import { JobNameParams, JobRunParams, JobRunSchema, JobRunStateSchema, JobStatusSchema } from "./model";
import { presentJobRun, presentJobRunState, presentJobStatus } from "./present";
import { getJobRun, listJobs, runJobNow } from "./service";

const detail = (summary: string) => ({ tags: ["Admin: system"], summary });

export function jobAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/jobs/admin" })
    .use(guard)
    .get("/admin/system/jobs", async ({ actor }) => ok({ items: (await listJobs(deps, actor)).map(presentJobStatus) }), {
      scopes: ["admin"],
      response: { 200: Envelope(t.Object({ items: t.Array(JobStatusSchema) })), ...errors(401, 403) },
      detail: detail("Background job passes: schedule, lease holder, last slot and last result"),
    })
    .post("/admin/system/jobs/:name/run", async ({ actor, params }) => ok(presentJobRun(await runJobNow(deps, actor, params.name))), {
      scopes: ["admin"],
      params: JobNameParams,
      response: { 200: Envelope(JobRunSchema), ...errors(401, 403, 404, 409) },
      detail: detail("Run a job pass now on this node and return its result (409 while another run holds its lease)"),
    })
    .get("/admin/system/jobs/:name/runs/:fence", async ({ actor, params }) => ok(presentJobRunState(await getJobRun(deps, actor, params.name, Number(params.fence)))), {
      scopes: ["admin"],
      params: JobRunParams,
      response: { 200: Envelope(JobRunStateSchema), ...errors(401, 403, 404) },
      detail: {
        ...detail("One run of a job pass: running, finished (its counts or its error) or abandoned"),
        description:
          "Poll this after `POST /admin/system/run-expiry-checks` (its 202 names the run and its `Location`). Only the job's latest run is on record: once a later run has started, an earlier fence is 404.",
      },
    });
}
