// The job runner on every engine: claim → run → finish, errors recorded, one run per slot across
// nodes, and the fence that stops a run that outlived its lease from overwriting the next one.
import { afterEach, expect, test } from "bun:test";
import type { JobPass } from "../../src/jobs/passes";
import { runPass } from "../../src/jobs/runner";
import { fixedClock, MINUTE } from "../../src/shared/clock";
import { AppError } from "../../src/shared/errors";
import { forEachEngine, type Opened } from "../contract/harness";
import { repoFor } from "../contract/repos";
import { jobDeps, nodeRepos } from "./nodes";

const T0 = "2026-11-21T08:00:00.000Z";

function probe(name: string, body: () => Promise<Record<string, number>>): JobPass {
  return { name, schedule: "* * * * *", leaseMs: MINUTE, description: "test pass", run: body };
}

forEachEngine("job runner", (engine, open) => {
  let o: Opened;
  afterEach(() => o?.close());

  test("a scheduled run claims, runs and records its result", async () => {
    o = await open();
    const clock = fixedClock(T0);
    const deps = jobDeps(repoFor(o), clock);
    const passes = [
      probe("count", async () => {
        clock.advance(250);
        return { things: 7 };
      }),
    ];
    const outcome = await runPass(deps, "count", { trigger: "schedule", slot: clock.now(), owner: "n1", passes });
    expect(outcome).toEqual({
      name: "count",
      trigger: "schedule",
      status: "ok",
      fence: 1,
      slot: new Date(T0),
      startedAt: new Date(T0),
      finishedAt: new Date(Date.parse(T0) + 250),
      result: { things: 7 },
      error: null,
      recorded: true,
    });
    expect(await deps.repos.jobLeases.list()).toEqual([
      {
        name: "count",
        owner: null,
        leaseUntil: null,
        fence: 1,
        lastSlotAt: new Date(T0),
        lastStartedAt: new Date(T0),
        lastFinishedAt: new Date(Date.parse(T0) + 250),
        lastResult: { trigger: "schedule", status: "ok", result: { things: 7 }, duration_ms: 250 },
      },
    ]);
    // The same slot again (this node or another): refused, the pass does not run.
    expect(await runPass(deps, "count", { trigger: "schedule", slot: new Date(T0), owner: "n2", passes })).toBeNull();
  });

  test("a pass that throws is recorded as an error and does not throw to the caller", async () => {
    o = await open();
    const clock = fixedClock(T0);
    const deps = jobDeps(repoFor(o), clock);
    const passes = [
      probe("broken", async () => {
        throw new Error("disk on fire");
      }),
    ];
    const outcome = await runPass(deps, "broken", { trigger: "admin", owner: "n1", passes });
    expect(outcome).toMatchObject({ status: "error", error: "disk on fire", result: null, recorded: true });
    const [lease] = await deps.repos.jobLeases.list();
    expect(lease).toMatchObject({ owner: null, lastSlotAt: null, lastResult: { trigger: "admin", status: "error", error: "disk on fire", duration_ms: 0 } });
    // The lease was released: the next run is possible at once.
    expect(await runPass(deps, "broken", { trigger: "admin", owner: "n1", passes })).toMatchObject({ fence: 2 });
  });

  test("unknown pass names are NOT_FOUND", async () => {
    o = await open();
    const deps = jobDeps(repoFor(o), fixedClock(T0));
    const error = await runPass(deps, "nope", { trigger: "admin" }).catch((e) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("NOT_FOUND");
  });

  test("three nodes racing for one slot: exactly one runs it, for each of 5 slots", async () => {
    o = await open();
    const nodes = await nodeRepos(o, 3);
    try {
      const clock = fixedClock(T0);
      let runs = 0;
      const passes = [
        probe("race", async () => {
          runs += 1;
          await Bun.sleep(20);
          return { runs };
        }),
      ];
      for (let slot = 0; slot < 5; slot++) {
        clock.set(Date.parse(T0) + slot * MINUTE);
        const outcomes = await Promise.all(
          nodes.repos.map((repos, i) => runPass(jobDeps(repos, clock), "race", { trigger: "schedule", slot: clock.now(), owner: `node-${i}`, passes })),
        );
        expect(outcomes.filter((x) => x !== null).length).toBe(1);
        expect(runs).toBe(slot + 1);
      }
    } finally {
      await nodes.close();
    }
  });

  test("a run that outlived its lease is taken over; its late finish records nothing", async () => {
    o = await open();
    const nodes = await nodeRepos(o, 2);
    try {
      const clock = fixedClock(T0);
      let release!: () => void;
      const stuck = new Promise<void>((r) => (release = r));
      let calls = 0;
      const passes = [
        probe("slow", async () => {
          calls += 1;
          if (calls === 1) {
            await stuck;
            return { which: 1 };
          }
          return { which: 2 };
        }),
      ];
      const a = runPass(jobDeps(nodes.repos[0]!, clock), "slow", { trigger: "schedule", slot: clock.now(), owner: "node-a", passes });
      await Bun.sleep(20);
      // Still held: node-b's next slot is refused until the lease (1 minute) ends.
      clock.advance(30_000);
      expect(await runPass(jobDeps(nodes.repos[1]!, clock), "slow", { trigger: "schedule", slot: clock.now(), owner: "node-b", passes })).toBeNull();
      clock.advance(30_000);
      const b = await runPass(jobDeps(nodes.repos[1]!, clock), "slow", { trigger: "schedule", slot: clock.now(), owner: "node-b", passes });
      expect(b).toMatchObject({ fence: 2, status: "ok", result: { which: 2 }, recorded: true });
      release();
      expect(await a).toMatchObject({ fence: 1, status: "ok", result: { which: 1 }, recorded: false });
      const [lease] = await nodes.repos[0]!.jobLeases.list();
      expect(lease).toMatchObject({ fence: 2, owner: null, lastSlotAt: new Date(Date.parse(T0) + MINUTE), lastResult: { result: { which: 2 } } });
    } finally {
      await nodes.close();
    }
  });

  test("an admin run is refused while a scheduled run holds the lease", async () => {
    o = await open();
    const clock = fixedClock(T0);
    const deps = jobDeps(repoFor(o), clock);
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    const passes = [
      probe("held", async () => {
        await stuck;
        return {};
      }),
    ];
    const scheduled = runPass(deps, "held", { trigger: "schedule", slot: clock.now(), owner: "node-a", passes });
    await Bun.sleep(20);
    expect(await runPass(deps, "held", { trigger: "admin", owner: "node-b", passes })).toBeNull();
    release();
    expect(await scheduled).toMatchObject({ recorded: true });
    expect(await runPass(deps, "held", { trigger: "admin", owner: "node-b", passes: [probe("held", async () => ({ n: 1 }))] })).toMatchObject({ status: "ok", fence: 2 });
  });
});
