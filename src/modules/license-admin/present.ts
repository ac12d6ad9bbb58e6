// Wire view of the composite admin license detail (license, plan, add-ons, features, activations,
// floating sessions).
import { presentAddon } from "../addons/present";
import type { EffectiveFeature } from "../addons/domain";
import { presentActivation } from "../activations/present";
import { presentFloatingSession } from "../floating/present";
import { presentLicenseSummary } from "../licenses/present";
import type { LicenseDetail } from "./service";

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
    floating_sessions: d.floatingSessions.map(presentFloatingSession),
  };
}
