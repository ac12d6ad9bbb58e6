import { iso } from "../../shared/clock";
import type { Activation } from "./repo";
import type { ActivateResult, VerifyResult } from "./service";

export const presentActivate = (r: ActivateResult) => ({ status: r.status, license_id: r.licenseId, token: r.token });

export function presentVerify({ access: { license, plan }, features, token }: VerifyResult) {
  return {
    status: license.status,
    plan_id: plan.id,
    plan_name: plan.name,
    valid_until: iso(license.validUntil),
    support_until: iso(license.supportUntil),
    features,
    token,
    grace_days: plan.graceDays,
    // Spec: "external_customer_id and external_workspace_id when present" — omitted, not null, otherwise.
    ...(license.externalCustomerId !== null ? { external_customer_id: license.externalCustomerId } : {}),
    ...(license.externalWorkspaceId !== null ? { external_workspace_id: license.externalWorkspaceId } : {}),
  };
}

export const presentActivation = (a: Activation) => ({
  id: a.id,
  identifier: a.identifier,
  identifier_type: a.identifierType,
  label: a.label,
  created_at: a.createdAt.toISOString(),
  last_seen_at: iso(a.lastSeenAt),
});
