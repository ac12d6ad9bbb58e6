// Entitlement rules: how plan features and add-on features combine, and how a feature reads on the
// wire. Pure: no I/O, no clock.
import type { FeatureValueType, QuotaPeriod } from "../plans/repo";
import type { FeatureGrant } from "./repo";

export interface Entitlement {
  name: string;
  valueType: FeatureValueType;
  /** Stored value; for quotas the (summed) limit as a string, or "unlimited". */
  value: string;
  enabled: boolean;
  /** Quotas only: the cap per period; null = unlimited. Always null for other types. */
  limit: number | null;
  /** The feature's quota period (its own, else the plan's quota_period). */
  period: QuotaPeriod;
}

const TRUE_WORDS = new Set(["true", "1", "yes", "on"]);
const truthy = (v: string) => TRUE_WORDS.has(v.trim().toLowerCase());

/**
 * enabled, per value type:
 *   bool        the value is true ("true", "1", "yes", "on")
 *   flag        always: a flag is on whenever it is present, and its value is only a label
 *               (the catalog's definition, plans/domain.ts normalizeFeature and docs/admin-api.md;
 *               bool is the type that can be explicitly off)
 *   int         the value is a non-zero number
 *   string      the value is non-empty
 *   quota       the limit is unlimited or above zero
 */
function isEnabled(valueType: FeatureValueType, value: string, limit: number | null): boolean {
  switch (valueType) {
    case "bool":
      return truthy(value);
    case "flag":
      return true;
    case "int": {
      const n = Number(value.trim());
      return value.trim() !== "" && Number.isFinite(n) && n !== 0;
    }
    case "string":
      return value.length > 0;
    case "quota":
      return limit === null || limit > 0;
  }
}

function fromGrant(g: FeatureGrant, planPeriod: QuotaPeriod, limit = g.quotaLimit): Entitlement {
  const quota = g.valueType === "quota";
  const effectiveLimit = quota ? limit : null;
  return {
    name: g.name,
    valueType: g.valueType,
    value: quota ? (effectiveLimit === null ? "unlimited" : String(effectiveLimit)) : g.value,
    enabled: isEnabled(g.valueType, g.value, effectiveLimit),
    limit: effectiveLimit,
    period: g.quotaPeriod ?? planPeriod,
  };
}

/**
 * Merge rule (shared with the catalog's add-on documentation): an add-on feature overrides a plan
 * feature of the same name, except that quota limits add up when both are quotas (an add-on sells
 * extra units; the period stays the one already granted). Unlimited plus anything stays unlimited.
 * Several add-ons of one feature apply in order, so their quotas all add up.
 */
export function mergeGrants(grants: readonly FeatureGrant[], planPeriod: QuotaPeriod): Map<string, Entitlement> {
  const out = new Map<string, Entitlement>();
  for (const g of grants) if (g.source === "plan") out.set(g.name, fromGrant(g, planPeriod));
  for (const g of grants) {
    if (g.source !== "addon") continue;
    const current = out.get(g.name);
    if (current && current.valueType === "quota" && g.valueType === "quota") {
      const limit = current.limit === null || g.quotaLimit === null ? null : current.limit + g.quotaLimit;
      out.set(g.name, { ...current, limit, value: limit === null ? "unlimited" : String(limit), enabled: limit === null || limit > 0 });
    } else {
      out.set(g.name, fromGrant(g, planPeriod));
    }
  }
  return out;
}

/**
 * The verify/token view (DECISIONS: Signed token `ftr`): booleans stay booleans (bool and flag
 * features), every other value is a string. Sorted by name so equal entitlements sign equal bytes.
 */
export function featureValues(entitlements: ReadonlyMap<string, Entitlement>): Record<string, boolean | string> {
  const out: Record<string, boolean | string> = {};
  for (const name of [...entitlements.keys()].sort()) {
    const e = entitlements.get(name)!;
    out[name] = e.valueType === "bool" || e.valueType === "flag" ? e.enabled : e.value;
  }
  return out;
}

/**
 * The Stripe meter that usage of quota `name` reports to (docs/payments.md "Metered billing"): the
 * plan's quota feature's `stripe_meter`. Add-ons that add units to that quota keep it; an add-on that
 * replaces the feature with another type, or a quota granted by add-ons alone, has none.
 */
export function quotaMeter(grants: readonly FeatureGrant[], name: string): string | null {
  let meter: string | null = null;
  for (const g of grants) {
    if (g.name !== name) continue;
    if (g.source === "plan") meter = g.valueType === "quota" ? (g.stripeMeter ?? null) : null;
    else if (g.valueType !== "quota") meter = null;
  }
  return meter;
}
