import { iso } from "../../shared/clock";
import type { License } from "./repo";

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
