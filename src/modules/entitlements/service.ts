// Entitlements (spec: POST /license/entitlements): plan features merged with add-ons, with the
// current quota counters. No token is issued here.
import type { Deps } from "../../deps";
import type { QuotaPeriod } from "../plans/repo";
import { belongsToProduct, isUsableAccess, keyHashOf, licenseNotFound, requireUsableLicense, type PublicLicenseInput } from "../license-api/access";
import type { FeatureGrant } from "./repo";
import type { LicenseAccess } from "../license-api/repo";
import { periodEnd, periodKey, remaining } from "./quota";
import { mergeGrants, type Entitlement } from "./domain";

/** Merged plan + add-on features of a license, by name. */
export async function licenseEntitlements(deps: Deps, access: LicenseAccess): Promise<Map<string, Entitlement>> {
  return mergeGrants(await deps.repos.entitlements.grants(access.plan.id, access.license.id), access.plan.quotaPeriod);
}

export interface FeatureView extends Entitlement {
  /** Quotas only (else null): the counter of the current period. */
  used: number | null;
  remaining: number | null;
  periodKey: string;
  resetsAt: Date;
}

/** The wire view of one entitlement given its current counter (null for non-quota features). */
export function viewOf(e: Entitlement, used: number | null, now: Date): FeatureView {
  const quota = e.valueType === "quota";
  return {
    ...e,
    used: quota ? (used ?? 0) : null,
    remaining: quota ? remaining({ used: used ?? 0, limit: e.limit }) : null,
    periodKey: periodKey(e.period, now),
    resetsAt: periodEnd(e.period, now),
  };
}

export async function featureView(deps: Deps, licenseId: string, e: Entitlement, now: Date): Promise<FeatureView> {
  const used = e.valueType === "quota" ? await deps.repos.usage.used(licenseId, e.name, periodKey(e.period, now)) : null;
  return viewOf(e, used, now);
}

/**
 * A feature the license does not have, for the single-feature check. Answering "not enabled" (not
 * 404) tells the caller nothing it could not learn from the full entitlement list of its own key.
 */
function absentFeature(name: string, period: QuotaPeriod): Entitlement {
  return { name, valueType: "bool", value: "false", enabled: false, limit: null, period };
}

export interface EntitlementsInput extends PublicLicenseInput {
  feature?: string;
}

export interface EntitlementsResult {
  access: LicenseAccess;
  features: FeatureView[];
}

export async function getEntitlements(deps: Deps, input: EntitlementsInput): Promise<EntitlementsResult> {
  const now = deps.clock.now();
  // An unusable license answers the collapsed 404, as verify does; otherwise entitlements would
  // reveal which keys are suspended, revoked or expired (spec: design rule 4).
  const access = await requireUsableLicense(deps, input, now);
  const all = await licenseEntitlements(deps, access);
  const selected =
    input.feature === undefined
      ? [...all.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      : [all.get(input.feature) ?? absentFeature(input.feature, access.plan.quotaPeriod)];
  return { access, features: await Promise.all(selected.map((e) => featureView(deps, access.license.id, e, now))) };
}

/** requireUsableLicense with the license's feature grants, read together (one round trip on PostgreSQL). */
export async function requireUsableLicenseWithGrants(deps: Deps, input: PublicLicenseInput, now: Date): Promise<{ access: LicenseAccess; grants: FeatureGrant[] }> {
  const hash = keyHashOf(deps, input.licenseKey);
  const found = hash === null ? null : await deps.repos.entitlements.findWithGrants(hash);
  if (!found || !belongsToProduct(found.access, input.productId) || !isUsableAccess(found.access, now)) throw licenseNotFound();
  return found;
}
