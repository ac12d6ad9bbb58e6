// The background writers' gate (src/db/background-gate.sqlite.ts): a write runs at once when
// nothing is in the way; it waits for the checkpoint thread's pause and for another thread's turn;
// a turn waits for both too; waiters woken together never go ahead of a turn taken in between.
import { expect, test } from "bun:test";
import { createBackgroundGate } from "../../src/db/background-gate.sqlite";
import type { Checkpointer } from "../../src/db/checkpointer.sqlite";

function pausable() {
  let paused: { promise: Promise<void>; open: () => void } | null = null;
  const checkpointer: Checkpointer = {
    stats: () => ({ running: true, checkpoints: 0, walFrames: 0, pauses: 0 }),
    backgroundWrite: () => paused?.promise ?? null,
    stop: () => {},
  };
  return {
    checkpointer,
    pause() {
      let open!: () => void;
      const promise = new Promise<void>((r) => (open = r));
      paused = { promise, open: () => ((paused = null), open()) };
    },
    resume: () => paused?.open(),
  };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

test("a write with nothing in the way runs synchronously", () => {
  const gate = createBackgroundGate(() => null);
  let ran = false;
  void gate.write(() => (ran = true));
  expect(ran).toBe(true);
});

test("a write waits for the checkpoint thread's pause, and a turn does too", async () => {
  const p = pausable();
  const gate = createBackgroundGate(() => p.checkpointer);
  p.pause();
  const log: string[] = [];
  const w = gate.write(() => log.push("write"));
  const a = gate.acquire().then((release) => (log.push("turn"), release));
  await tick();
  expect(log).toEqual([]);
  p.resume();
  await w;
  (await a)();
  expect(log).toEqual(["write", "turn"]);
});

test("while another thread holds a turn, writes wait; they run when it is handed back", async () => {
  const gate = createBackgroundGate(() => null);
  const release = await gate.acquire();
  const log: string[] = [];
  const writes = [gate.write(() => log.push("a")), gate.write(() => log.push("b"))];
  await tick();
  expect(log).toEqual([]);
  release();
  await Promise.all(writes);
  expect(log).toEqual(["a", "b"]);
});

test("two turns asked for together are given one after the other, never at once", async () => {
  const gate = createBackgroundGate(() => null);
  const first = await gate.acquire();
  let holders = 0;
  let most = 0;
  const take = async () => {
    const release = await gate.acquire();
    holders++;
    most = Math.max(most, holders);
    await tick();
    holders--;
    release();
  };
  const both = Promise.all([take(), take()]);
  first();
  await both;
  expect(most).toBe(1);
  // A write waits for neither once both are back.
  let ran = false;
  void gate.write(() => (ran = true));
  expect(ran).toBe(true);
});
