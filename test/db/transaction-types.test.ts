// The type half of "a transaction cannot call outside itself" (db/store.ts Tx; the runtime half is
// db/transaction-scope.ts, tested in test/contract/transaction.contract.test.ts). Checked by
// `tsc --noEmit -p .` (tsconfig includes test/): each @ts-expect-error below fails the type check
// as soon as the line it marks compiles. The function is never called.
import { expect, test } from "bun:test";
import type Stripe from "stripe";
import type { Deps } from "../../src/deps";
import { signIn } from "../../src/modules/sessions/service";
import type { StripeHandlerContext } from "../../src/modules/payments/event-context";
import { SYSTEM_ACTOR } from "../../src/shared/actor";

const input = { email: "a@example.com", method: "dev", ip: null, userAgent: null } as const;

async function onlyTheTransactionContext(deps: Deps, event: Stripe.Event) {
  // @ts-expect-error Deps is not a Tx (it has everything a Tx has, but not the brand only the store sets)
  await signIn(deps, input);
  // @ts-expect-error Stripe handlers get the event's transaction, not Deps
  const wrong: StripeHandlerContext = { deps, event, at: new Date(0), prepared: undefined, actor: SYSTEM_ACTOR };
  void wrong;
  await deps.db.transaction(async (tx) => {
    // @ts-expect-error no nested transaction: a Tx has no db
    await tx.db.transaction(async () => null);
    // @ts-expect-error no network I/O inside: a Tx has no Stripe client
    void tx.stripe;
    // @ts-expect-error no outbox nudge inside: nudge after the commit
    tx.outboxNudge.nudge();
    return await signIn(tx, input); // the right one
  });
}

test("a transaction's callback gets only a Tx, and Deps is not one (checked by tsc)", () => {
  expect(typeof onlyTheTransactionContext).toBe("function");
});
