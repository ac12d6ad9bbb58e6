// POST /admin/system/run-expiry-checks answers 202 with the run it started (or the one already
// running); its counts are read by polling the run it names until it has finished.
import { expect } from "bun:test";
import type { TestApp } from "./app";

const V1 = "/api/v1";

/** Starts the lifecycle pass through the route and waits for its counts (status ok). */
export async function runExpiryChecks(t: Pick<TestApp, "request">, opts: { key?: string } = {}): Promise<Record<string, number>> {
  const res = await t.request("POST", `${V1}/admin/system/run-expiry-checks`, opts.key ? { key: opts.key } : {});
  expect(res.status).toBe(202);
  expect(res.body.data).toMatchObject({ name: "lifecycle", status: "running" });
  const location = res.headers.get("location");
  expect(location).toBe(`${V1}/admin/system/jobs/lifecycle/runs/${res.body.data.fence}`);
  return (await pollRun(t, location!, opts)).result;
}

/** Polls a run (GET …/jobs/{name}/runs/{fence}) until it is no longer running; expects it ok. */
export async function pollRun(t: Pick<TestApp, "request">, location: string, opts: { key?: string } = {}): Promise<{ result: Record<string, number>; [k: string]: unknown }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await t.request("GET", location, opts.key ? { key: opts.key } : {});
    expect(res.status).toBe(200);
    if (res.body.data.status !== "running") {
      expect(res.body.data).toMatchObject({ status: "ok", error: null });
      return res.body.data;
    }
    if (Date.now() > deadline) throw new Error(`run ${location} still running after 30 s`);
    await Bun.sleep(5);
  }
}
