import type { TSchema } from "@sinclair/typebox";
import { t } from "../http/schema";

const Instant = t.Union([t.String({ format: "date-time" }), t.Null()]);
const Counts = t.Record(t.String(), t.Integer(), { description: "Counts the pass reports (rows deleted, messages sent, …)" });

export const JobNameParams = t.Object({ name: t.String({ minLength: 1, maxLength: 64, description: "Job pass name, e.g. prune-idempotency" }) });

export const LastResultSchema = t.Object(
  {
    trigger: t.Union([t.Literal("schedule"), t.Literal("admin"), t.Literal("nudge")], { description: "nudge: a prompt deliver-outbox run of an earlier version (the delivery worker records no runs)" }),
    status: t.Union([t.Literal("ok"), t.Literal("error")]),
    result: t.Union([Counts, t.Null()]),
    error: t.Union([t.String(), t.Null()]),
    duration_ms: t.Integer(),
  },
  { title: "JobLastResult" },
);

export const JobStatusSchema = t.Object(
  {
    name: t.String(),
    description: t.String(),
    schedule: t.String({ description: "5-field cron expression, UTC; `continuous` for the delivery passes, which every node runs continuously (the delivery worker)" }),
    running: t.Boolean({ description: "A run holds an unexpired lease" }),
    lease_owner: t.Union([t.String(), t.Null()], { description: "Node holding the lease (host:pid:id), null when free; set with running false: that run outlived its lease (the node died or stalled)" }),
    lease_until: Instant,
    fence: t.Integer({ description: "Claims so far; each run gets the next number" }),
    last_slot_at: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "Last scheduled slot claimed (admin runs do not change it)" }),
    last_started_at: Instant,
    last_finished_at: Instant,
    last_result: t.Union([LastResultSchema, t.Null()]),
  },
  { title: "JobStatus" },
);

export const JobRunSchema = t.Object(
  {
    name: t.String(),
    trigger: t.Union([t.Literal("schedule"), t.Literal("admin"), t.Literal("nudge")]),
    status: t.Union([t.Literal("ok"), t.Literal("error")], { description: "error: the pass threw; the message is in `error`" }),
    fence: t.Integer(),
    started_at: t.String({ format: "date-time" }),
    finished_at: t.String({ format: "date-time" }),
    result: t.Union([Counts, t.Null()]),
    error: t.Union([t.String(), t.Null()]),
    recorded: t.Boolean({ description: "false when the lease expired and was taken over before the pass finished" }),
  },
  { title: "JobRun" },
);

export const JobRunParams = t.Object({
  name: JobNameParams.properties.name,
  fence: t.String({ pattern: "^[1-9][0-9]{0,15}$", description: "The run's fence (its number among the job's claims), from the 202 of the request that started or found it" }),
});

/** One run's state; `result` is the pass's counts (a job's own schema, or any counts). */
export const jobRunStateSchema = <R extends TSchema>(result: R, title: string) =>
  t.Object(
  {
    name: t.String(),
    fence: t.Integer({ description: "The run's number among the job's claims; poll GET /admin/system/jobs/{name}/runs/{fence}" }),
    status: t.Union([t.Literal("running"), t.Literal("ok"), t.Literal("error"), t.Literal("abandoned")], {
      description: "running: holds its lease; ok / error: finished (the counts, or the message); abandoned: its lease expired unfinished (the node stopped or stalled), the next run starts over",
    }),
    started_at: Instant,
    lease_until: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "While running: when its lease lapses" }),
    finished_at: Instant,
    result: t.Union([result, t.Null()], { description: "The pass's counts once it finished ok" }),
    error: t.Union([t.String(), t.Null()]),
  },
  { title },
);

export const JobRunStateSchema = jobRunStateSchema(Counts, "JobRunState");
