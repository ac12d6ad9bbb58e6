// Work that shares the event loop with requests (issue 26): bun:sqlite runs every statement
// synchronously, so a background job (outbox delivery, the lifecycle pass, pruning) holds the
// loop for as long as it runs without awaiting something that is not already settled.

import type { Clock } from "./clock";

/** Lets the requests waiting on this node run before the caller goes on. */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * `await slice()` between units of work: settles at once until `budgetMs` of work has passed since
 * the last yield, then yields to the event loop. A unit longer than the budget still runs whole.
 */
export function timeSlicer(budgetMs: number, clock: Pick<Clock, "monotonicMs">): () => Promise<void> {
  let since = clock.monotonicMs();
  return async () => {
    if (clock.monotonicMs() - since < budgetMs) return;
    await yieldToEventLoop();
    since = clock.monotonicMs();
  };
}
