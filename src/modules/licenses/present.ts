import { iso } from "../../shared/clock";
import { presentAddon } from "../addons/present";
import type { EffectiveFeature } from "../addons/domain";
import type { License } from "./repo";
import { presentActivation } from "../activations/present";
import { presentFloatingSession } from "../floating/present";
import type { LicenseDetail } from "./service";

/** The summary fields of a license. Never the key hash or ciphertext. */
export function presentLicenseSummary(license: License, planName: string) {
  return {
    id: license.id,
    product_id: license.productId,
    plan_id: license.planId,
    plan_name: planName,
    email: license.email,
    status: license.status,
    key_hint: license.keyHint,
    valid_until: iso(license.validUntil),
    support_until: iso(license.supportUntil),
    external_customer_id: license.externalCustomerId,
    external_workspace_id: license.externalWorkspaceId,
    created_at: license.createdAt.toISOString(),
    updated_at: license.updatedAt.toISOString(),
  };
}

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

/** What an audit row records about a license: editable wire fields, never key material. */
export function licenseAuditView(l: License) {
  return {
    plan_id: l.planId,
    email: l.email,
    status: l.status,
    valid_until: iso(l.validUntil),
    support_until: iso(l.supportUntil),
    external_customer_id: l.externalCustomerId,
    external_workspace_id: l.externalWorkspaceId,
  };
}
