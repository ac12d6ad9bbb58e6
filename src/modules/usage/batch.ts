// What both engines' usage batches share: each waiting report is settled with its own outcome, once
// the batch's transaction has committed (a report is acknowledged only once it is durable).

/** One report's result inside a batch: its value, or the error that undid it alone. */
export type Outcome<T> = { ok: T } | { error: unknown };

export interface Waiting<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

/** Settles `batch[i]` with `outcomes[i]`, in order. */
export function settleEach<T>(batch: readonly Waiting<T>[], outcomes: readonly Outcome<T>[]): void {
  batch.forEach((p, i) => {
    const o = outcomes[i]!;
    if ("ok" in o) p.resolve(o.ok);
    else p.reject(o.error);
  });
}
