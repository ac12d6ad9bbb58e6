// What both engines' usage batches share: a report waiting for its batch, and settling each one with
// its own outcome once the batch's transaction has committed (acknowledged only once durable).
import type { Recorder } from "../idempotency/repo";
import type { LicenseAccess } from "../license-api/repo";
import type { Effects } from "../outbox/effects";
import type { ConsumeChange, ConsumeInput, ConsumeResult } from "./repo";

/** One report waiting for its batch: UsageRepo.consume's arguments and its promise's settlers. */
export interface WaitingReport {
  input: ConsumeInput;
  check: (current: LicenseAccess | null) => void;
  record?: Recorder<ConsumeResult>;
  effects?: (change: ConsumeChange) => Effects;
  resolve(result: ConsumeResult): void;
  reject(error: unknown): void;
}

/** One report's result inside a batch: its value, or the error that undid it alone. */
export type Outcome = { ok: ConsumeResult } | { error: unknown };

/** Settles `batch[i]` with `outcomes[i]`, in order. */
export function settleEach(batch: readonly WaitingReport[], outcomes: readonly Outcome[]): void {
  batch.forEach((p, i) => {
    const o = outcomes[i]!;
    if ("ok" in o) p.resolve(o.ok);
    else p.reject(o.error);
  });
}
