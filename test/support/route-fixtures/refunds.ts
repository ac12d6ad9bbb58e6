import type { RouteFixtures } from "./types";
import { makeLicense, makePlan } from "../factories";
import { newId } from "../../../src/shared/ids";

// A license action like revoke (licenses:write). The fixture plants a paid license; the auth matrix
// runs its app against a fake Stripe, which refunds any PaymentIntent.
export default {
  "POST /api/v1/admin/licenses/:id/refund": {
    scopes: ["licenses:write"],
    build: async ({ t, product }) => {
      const plan = await makePlan(t.deps, product.id);
      const { license } = await makeLicense(t.deps, { productId: product.id, planId: plan.id });
      const now = t.deps.clock.now();
      await t.deps.repos.payments.recordPayment({
        id: newId(),
        licenseId: license.id,
        kind: "purchase",
        stripeCheckoutSessionId: `cs_fixture_${newId()}`,
        stripeInvoiceId: null,
        stripePaymentIntentId: `pi_fixture_${newId()}`,
        amount: 4900,
        currency: "usd",
        paidAt: now,
        refundState: null,
        stripeRefundId: null,
        refundedAt: null,
        createdAt: now,
      });
      return { params: { id: license.id } };
    },
  },
} satisfies RouteFixtures;
