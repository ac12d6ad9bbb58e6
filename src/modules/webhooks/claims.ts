// The delivery side of webhooks over WebhookRepo's rows (the pool in deliver.ts calls these): claiming
// due deliveries, and settling an attempt in one unit of work with domain.ts deciding what it does to
// the endpoint. Claims are fenced (at least once, never twice while a claim holds) on both engines.
import type { Repos } from "../../deps";
import type { Effects } from "../outbox/effects";
import { afterFailedAttempt, claimWindow, pickDeliveries } from "./domain";
import type { AttemptOutcome, DisabledReason, WebhookDelivery } from "./repo";

/** Read-and-claim rounds of one claim when other nodes take the rows it picked. */
const CLAIM_ROUNDS = 5;
const byAge = (a: WebhookDelivery, b: WebhookDelivery) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export interface ClaimInput {
  now: Date;
  limit: number;
  leaseUntil: Date;
  perEndpoint?: number;
  inFlight?: ReadonlyMap<string, number>;
}

/**
 * Claims up to `limit` pending deliveries due at `now` whose endpoint is enabled, oldest due first
 * across endpoints, by moving their next_attempt_at to `leaseUntil` (the claim token for
 * settleAttempt); returns them oldest first. With `perEndpoint`, no endpoint gets more than
 * `perEndpoint` minus its `inFlight` count (domain.ts pickDeliveries): each enabled endpoint's due
 * deliveries are read through the index, at most claimWindow of them, so a large backlog of one
 * endpoint is never scanned. Exact across nodes (and processes on one SQLite file): the claim's
 * update takes only rows still pending and due, so no delivery is claimed twice while its claim holds.
 *
 * No unit of work: each step is one statement, and another node may claim rows this one picked
 * between the read and the update (the update then skips them): it picks again from what is still
 * due, a few times at most.
 */
export async function claimDueDeliveries(repos: Pick<Repos, "webhooks">, { now, limit, leaseUntil, perEndpoint, inFlight }: ClaimInput): Promise<WebhookDelivery[]> {
  const out: WebhookDelivery[] = [];
  const busy = new Map(inFlight ?? []);
  for (let round = 0; round < CLAIM_ROUNDS && out.length < limit; round++) {
    const room = { limit: limit - out.length, perEndpoint: perEndpoint ?? limit, inFlight: busy };
    const ids = pickDeliveries(await repos.webhooks.dueDeliveries(now, claimWindow(room)), room);
    if (ids.length === 0) break;
    const claimed = await repos.webhooks.claimDeliveries(ids, now, leaseUntil);
    for (const d of claimed) {
      out.push(d);
      busy.set(d.endpointId, (busy.get(d.endpointId) ?? 0) + 1);
    }
    if (claimed.length === ids.length) break;
  }
  return out.sort(byAge);
}

export interface SettleInput {
  id: string;
  /** The claim token: the delivery's next_attempt_at as claimed. */
  claim: Date;
  outcome: AttemptOutcome;
  failureThreshold: number;
  /** The audit row and the admins' emails of an endpoint this attempt disables (deliver.ts disableEffects). */
  disableEffects: (reason: DisabledReason) => Effects;
}

/**
 * Records one attempt of a claimed delivery and its endpoint's failure count, in the caller's unit of
 * work: a success resets the count; a failure adds one, and when the count reaches
 * `failureThreshold` or the outcome says "gone" the endpoint is disabled and `disableEffects` are
 * written, by exactly one of the attempts settled at once (domain.ts afterFailedAttempt, under the
 * endpoint's row lock). `settled` false: the claim was lost (nothing recorded).
 */
export async function settleAttempt(repos: Pick<Repos, "webhooks" | "outbox">, input: SettleInput): Promise<{ settled: boolean; disabled: DisabledReason | null }> {
  const { outcome } = input;
  const endpointId = await repos.webhooks.recordAttempt(input.id, input.claim, outcome);
  if (endpointId === null) return { settled: false, disabled: null };
  if (outcome.result === "delivered") {
    // A success resets the count whatever it was: nothing to read first.
    await repos.webhooks.setEndpointHealth(endpointId, { consecutiveFailures: 0 });
    return { settled: true, disabled: null };
  }
  // Locked until the unit ends: failures settled at once (on any node) count one after another, and
  // each sees whether an earlier one disabled the endpoint.
  const endpoint = await repos.webhooks.lockEndpointHealth(endpointId);
  if (!endpoint) return { settled: true, disabled: null };
  const { changes, disabled } = afterFailedAttempt(endpoint, outcome, input.failureThreshold);
  await repos.webhooks.setEndpointHealth(endpointId, changes);
  if (disabled) await repos.outbox.writeEffects(input.disableEffects(disabled));
  return { settled: true, disabled };
}
