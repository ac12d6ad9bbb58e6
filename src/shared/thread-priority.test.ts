// src/shared/thread-priority.ts: the calling thread, and only it, moves to SCHED_IDLE (Linux).
import { expect, test } from "bun:test";
import { lowerThisThreadPriority } from "./thread-priority";
import { SCHED_IDLE, threadPolicyMap } from "../../test/support/thread-policy";

const linux = process.platform === "linux";

test.if(linux)("a worker that lowers itself is in SCHED_IDLE; the main thread is not", async () => {
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
    // The caller alone: the main thread keeps its policy. (Other threads of this process, other test
    // files' checkpoint threads among them, come and go meanwhile.)
    expect(outcome.tid).not.toBe(process.pid);
    expect(after.get(process.pid)).toBe(before.get(process.pid)!);
  } finally {
    worker.terminate();
  }
});

test.if(!linux)("elsewhere it says why it did nothing", () => {
  expect(lowerThisThreadPriority()).toMatchObject({ lowered: false });
});
