// A thread that takes background-writer turns (src/db/background-gate.sqlite.ts threadGate) for
// test/db/background-gate.test.ts: on { shared, inside, writes } it writes `writes` times, each time
// checking that nobody else is inside (inside[0] must be 0 when it enters), staying inside for a
// moment, and counting violations in inside[1]; it posts "wrote" after each write and "done" at the end.
import { threadGate } from "../../src/db/background-gate.sqlite";

declare const self: Worker;

self.onmessage = async (event: MessageEvent) => {
  const { shared, inside, writes } = event.data as { shared: SharedArrayBuffer; inside: SharedArrayBuffer; writes: number };
  const gate = threadGate(shared);
  const flag = new Int32Array(inside);
  for (let i = 0; i < writes; i++) {
    await gate.write(() => {
      if (Atomics.exchange(flag, 0, 2) !== 0) Atomics.add(flag, 1, 1);
      const until = performance.now() + 0.05;
      while (performance.now() < until);
      Atomics.store(flag, 0, 0);
    });
    self.postMessage("wrote");
  }
  self.postMessage("done");
};
