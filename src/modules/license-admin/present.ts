// Wire view of the composite admin license detail (license, plan, add-ons, features, activations,
// floating sessions).
import { presentAddon } from "../addons/present";
import type { EffectiveFeature } from "../addons/domain";
import { presentActivation } from "../activations/present";
import { presentFloatingSession } from "../floating/present";
import { presentLicenseSummary } from "../licenses/present";
import type { LicenseDetail } from "./service";
import type { RefundOutcome } from "../payments/refund";

function presentFeature(f: EffectiveFeature) {
  return { name: f.name, value_type: f.valueType, value: f.value, quota_limit: f.quotaLimit, quota_period: f.quotaPeriod, sources: f.sources };
}

/** Admin view of one license, including the decrypted key (admins may see it). */
export function presentLicenseDetail(d: LicenseDetail) {
  return {
    ...presentLicenseSummary(d.license, d.plan.name),
    license_key: d.key,
    grace_days: d.plan.graceDays,
    addons: d.addons.map(presentAddon),
    features: d.features.map(presentFeature),
    activations: d.activations.map(presentActivation),
    activations_next_cursor: d.activationsNextCursor,
    floating_sessions: d.floatingSessions.map(presentFloatingSession),
  };
}

/** POST /admin/licenses/{id}/refund: the license as the refund left it, and the refund. */
export function presentRefundedLicense(d: LicenseDetail, r: RefundOutcome) {
  return {
    ...presentLicenseDetail(d),
    refund: {
      payment_id: r.payment.id,
      kind: r.payment.kind,
      stripe_refund_id: r.payment.stripeRefundId,
      amount: r.payment.amount,
      currency: r.payment.currency,
      refunded_at: (r.payment.refundedAt ?? r.license.updatedAt).toISOString(),
      refunded_now: r.refundedNow,
      subscription_canceled: r.subscriptionCanceled,
    },
  };
}
