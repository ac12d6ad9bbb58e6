// The prompt-delivery nudge with a hand-fired timer: debouncing, lease-busy retries, a nudge during a
// pass, and stop.
import { describe, expect, test } from "bun:test";
import { createOutboxNudger, NUDGE_DELAY_MS, NUDGE_MAX_RETRIES, NUDGE_RETRY_MS, type Later } from "./nudge";

function fakeLater() {
  const pending: { fn: () => void; ms: number; cancelled: boolean }[] = [];
  const later: Later = (fn, ms) => {
    const entry = { fn, ms, cancelled: false };
    pending.push(entry);
    return { cancel: () => void (entry.cancelled = true) };
  };
  const armed = () => pending.filter((p) => !p.cancelled).map((p) => p.ms);
  /** Fires the oldest armed timer. */
  const fire = () => {
    const i = pending.findIndex((p) => !p.cancelled);
    if (i < 0) throw new Error("no timer armed");
    const [entry] = pending.splice(i, 1);
    entry!.fn();
  };
  return { later, armed, fire };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe("outbox nudge", () => {
  test("does nothing until started, and again after stop", async () => {
    const clock = fakeLater();
    const n = createOutboxNudger({ later: clock.later });
    n.nudge();
    expect(clock.armed()).toEqual([]);
    let runs = 0;
    n.start(async () => ++runs > 0);
    await n.stop();
    n.nudge();
    expect(clock.armed()).toEqual([]);
    expect(runs).toBe(0);
  });

  test("a burst of nudges gives one pass", async () => {
    const clock = fakeLater();
    const n = createOutboxNudger({ later: clock.later });
    let runs = 0;
    n.start(async () => (runs++, true));
    n.nudge();
    n.nudge();
    n.nudge();
    expect(clock.armed()).toEqual([NUDGE_DELAY_MS]);
    clock.fire();
    await settle();
    expect(runs).toBe(1);
    expect(clock.armed()).toEqual([]);
  });

  test("while the lease is held elsewhere it retries, a bounded number of times", async () => {
    const clock = fakeLater();
    const n = createOutboxNudger({ later: clock.later });
    let runs = 0;
    n.start(async () => (runs++, false));
    n.nudge();
    clock.fire();
    for (let i = 0; i < NUDGE_MAX_RETRIES; i++) {
      await settle();
      expect(clock.armed()).toEqual([NUDGE_RETRY_MS]);
      clock.fire();
    }
    await settle();
    expect(runs).toBe(NUDGE_MAX_RETRIES + 1);
    expect(clock.armed()).toEqual([]);
  });

  test("a nudge during a pass runs one more pass after it (its change may have committed after the pass began)", async () => {
    const clock = fakeLater();
    const n = createOutboxNudger({ later: clock.later });
    let release!: () => void;
    let runs = 0;
    n.start(async () => {
      runs++;
      if (runs === 1) await new Promise<void>((r) => (release = r));
      return true;
    });
    n.nudge();
    clock.fire();
    await settle();
    n.nudge();
    n.nudge();
    expect(clock.armed()).toEqual([]);
    release();
    await settle();
    expect(clock.armed()).toEqual([NUDGE_DELAY_MS]);
    clock.fire();
    await settle();
    expect(runs).toBe(2);
    expect(clock.armed()).toEqual([]);
  });

  test("a pass that throws is reported and does not stop later nudges; stop waits for a running pass", async () => {
    const clock = fakeLater();
    const errors: unknown[] = [];
    const n = createOutboxNudger({ later: clock.later, onError: (e) => errors.push(e) });
    let release!: () => void;
    let runs = 0;
    n.start(async () => {
      runs++;
      if (runs === 1) throw new Error("database down");
      await new Promise<void>((r) => (release = r));
      return true;
    });
    n.nudge();
    clock.fire();
    await settle();
    expect(errors.map((e) => (e as Error).message)).toEqual(["database down"]);
    n.nudge();
    clock.fire();
    await settle();
    let stopped = false;
    const stopping = n.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(stopped).toBe(true);
    expect(clock.armed()).toEqual([]);
  });
});
