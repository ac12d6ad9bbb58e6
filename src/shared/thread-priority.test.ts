// src/shared/thread-priority.ts: the calling thread, and only it, moves to SCHED_IDLE (Linux).
import { expect, test } from "bun:test";
import { lowerThisThreadPriority } from "./thread-priority";
import { SCHED_IDLE, threadPolicyMap } from "../../test/support/thread-policy";

const linux = process.platform === "linux";

test.if(linux)("a worker that lowers itself is in SCHED_IDLE; the main thread and the others are not", async () => {
  const before = threadPolicyMap();
  expect(before.get(process.pid)).not.toBe(SCHED_IDLE);
  const worker = new Worker(new URL("../../test/support/thread-priority-worker.ts", import.meta.url));
  try {
    const outcome = await new Promise<{ lowered: boolean; tid?: number; reason?: string }>((resolve) => {
      worker.onmessage = (e) => resolve(e.data);
    });
    expect(outcome).toMatchObject({ lowered: true });
    const after = threadPolicyMap();
    expect(after.get(outcome.tid!)).toBe(SCHED_IDLE);
    expect(after.get(process.pid)).toBe(before.get(process.pid)!);
    expect([...after].filter(([tid, p]) => p === SCHED_IDLE && tid !== outcome.tid)).toEqual([...before].filter(([, p]) => p === SCHED_IDLE));
  } finally {
    worker.terminate();
  }
});

test.if(!linux)("elsewhere it says why it did nothing", () => {
  expect(lowerThisThreadPriority()).toMatchObject({ lowered: false });
});
