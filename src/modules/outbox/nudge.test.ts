import { expect, test } from "bun:test";
import { createOutboxNudger } from "./nudge";

test("a nudge wakes the delivery worker only while it runs", async () => {
  const nudger = createOutboxNudger();
  let wakes = 0;
  // Before the worker starts (JOBS off, CLI commands), a nudge does nothing.
  nudger.nudge();
  nudger.start(() => (wakes += 1));
  nudger.nudge();
  nudger.nudge();
  expect(wakes).toBe(2);
  await nudger.stop();
  nudger.nudge();
  expect(wakes).toBe(2);
});
