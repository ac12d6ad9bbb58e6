import { expect, test } from "bun:test";
import { timeSlicer } from "./slices";
import { systemClock } from "./clock";

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

test("a slice settles without yielding until its budget is spent, then lets queued callbacks run first", async () => {
  const slice = timeSlicer(5, systemClock);
  const order: string[] = [];
  setImmediate(() => order.push("immediate"));
  await slice();
  order.push("within budget");
  busy(6);
  await slice();
  order.push("after budget");
  expect(order).toEqual(["within budget", "immediate", "after budget"]);
});
