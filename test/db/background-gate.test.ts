// The background writers' turns (src/db/background-gate.sqlite.ts): a write runs at once when
// nothing is in the way; the serving thread's writes wait for the checkpoint thread's pause and for
// another thread's turn; a real second thread and the serving thread never write at once; the
// pause holds the other thread too.
import { afterEach, expect, test } from "bun:test";
import { createBackgroundGate } from "../../src/db/background-gate.sqlite";
import type { Checkpointer } from "../../src/db/checkpointer.sqlite";

const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));
const workers: Worker[] = [];
afterEach(() => {
  for (const w of workers.splice(0)) w.terminate();
});

test("a write with nothing in the way runs synchronously", () => {
  const gate = createBackgroundGate(() => null);
  let ran = false;
  void gate.write(() => (ran = true));
  expect(ran).toBe(true);
});

test("a write waits for the checkpoint thread's pause", async () => {
  let open!: () => void;
  let paused: Promise<void> | null = new Promise<void>((r) => (open = r));
  const checkpointer: Checkpointer = {
    stats: () => ({ running: true, checkpoints: 0, walFrames: 0, pauses: 1, idleTid: null }),
    backgroundWrite: () => paused,
    stop: () => {},
  };
  const gate = createBackgroundGate(() => checkpointer);
  const log: string[] = [];
  const w = gate.write(() => log.push("write"));
  await tick();
  expect(log).toEqual([]);
  paused = null;
  open();
  await w;
  expect(log).toEqual(["write"]);
});

test("while another thread holds the turn, writes wait; they run when it is handed back", async () => {
  const gate = createBackgroundGate(() => null);
  const word = new Int32Array(gate.shared);
  Atomics.store(word, 0, 2); // the other thread's turn
  const log: string[] = [];
  const writes = [gate.write(() => log.push("a")), gate.write(() => log.push("b"))];
  await tick(50);
  expect(log).toEqual([]);
  Atomics.store(word, 0, 0);
  Atomics.notify(word, 0);
  await Promise.all(writes);
  expect(log).toEqual(["a", "b"]);
});

function startWriter(shared: SharedArrayBuffer, inside: SharedArrayBuffer, writes: number) {
  const worker = new Worker(new URL("../support/gate-worker.ts", import.meta.url));
  workers.push(worker);
  let wrote = 0;
  const done = new Promise<void>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent) => {
      if (e.data === "wrote") wrote++;
      else if (e.data === "done") resolve();
    };
    worker.onerror = (e: ErrorEvent) => reject(new Error(e.message));
  });
  worker.postMessage({ shared, inside, writes });
  return { done, wrote: () => wrote };
}

test("a second thread and the serving thread never write at once", async () => {
  const gate = createBackgroundGate(() => null);
  const inside = new SharedArrayBuffer(8);
  const flag = new Int32Array(inside);
  const writer = startWriter(gate.shared, inside, 400);
  let mine = 0;
  while (writer.wrote() < 400) {
    await gate.write(() => {
      if (Atomics.exchange(flag, 0, 1) !== 0) Atomics.add(flag, 1, 1);
      const until = performance.now() + 0.05;
      while (performance.now() < until);
      Atomics.store(flag, 0, 0);
    });
    mine++;
    if (mine % 10 === 0) await tick(0);
  }
  await writer.done;
  expect(mine).toBeGreaterThan(0);
  expect(Atomics.load(flag, 1)).toBe(0); // no write ever found the other inside
});

test("the checkpoint thread's pause holds the other thread's turns too", async () => {
  const gate = createBackgroundGate(() => null);
  gate.setPaused(true);
  const writer = startWriter(gate.shared, new SharedArrayBuffer(8), 3);
  await tick(200);
  expect(writer.wrote()).toBe(0);
  gate.setPaused(false);
  await writer.done;
  expect(writer.wrote()).toBe(3);
});
