// The add-on merge rule (docs/admin-api.md "Add-ons"): a license's effective features are its plan's
// features with its add-ons applied in attach order. An add-on feature replaces a plan (or earlier
// add-on) feature of the same name, except when both are quota features: then the limits add up and
// the period already in force stays (one counter per feature can only have one reset boundary).
import type { FeatureValueType, PlanFeature, QuotaPeriod } from "../plans/repo";
import { normalizeFeature, type FeatureSpec } from "../plans/domain";
import type { Addon, AddonPatch } from "./repo";

export interface EffectiveFeature {
  name: string;
  valueType: FeatureValueType;
  value: string;
  quotaLimit: number | null;
  /** Resolved for quota features (feature override, else the plan's); null otherwise. */
  quotaPeriod: QuotaPeriod | null;
  /** "plan", or the ids of the add-ons that shaped the value (after the plan, if it had the feature). */
  sources: string[];
}

export function mergeFeatures(
  planQuotaPeriod: QuotaPeriod,
  planFeatures: readonly Pick<PlanFeature, "name" | "valueType" | "value" | "quotaLimit" | "quotaPeriod">[],
  attached: readonly Pick<Addon, "id" | "featureName" | "valueType" | "value" | "quotaLimit" | "quotaPeriod">[],
): EffectiveFeature[] {
  const period = (valueType: FeatureValueType, own: QuotaPeriod | null) => (valueType === "quota" ? (own ?? planQuotaPeriod) : null);
  const out = new Map<string, EffectiveFeature>();
  for (const f of planFeatures) {
    out.set(f.name, {
      name: f.name,
      valueType: f.valueType,
      value: f.value,
      quotaLimit: f.valueType === "quota" ? f.quotaLimit : null,
      quotaPeriod: period(f.valueType, f.quotaPeriod),
      sources: ["plan"],
    });
  }
  for (const a of attached) {
    const current = out.get(a.featureName);
    if (current && current.valueType === "quota" && a.valueType === "quota") {
      const limit = (current.quotaLimit ?? 0) + (a.quotaLimit ?? 0);
      out.set(a.featureName, { ...current, quotaLimit: limit, value: String(limit), sources: [...current.sources, a.id] });
      continue;
    }
    out.set(a.featureName, {
      name: a.featureName,
      valueType: a.valueType,
      value: a.value,
      quotaLimit: a.valueType === "quota" ? a.quotaLimit : null,
      quotaPeriod: period(a.valueType, a.quotaPeriod),
      sources: [a.id],
    });
  }
  return [...out.values()].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
}

/** Fields an add-on update may carry; undefined = keep. `null` clears quota fields. */
export interface AddonUpdate extends Partial<FeatureSpec> {
  name?: string;
  featureName?: string;
}

/**
 * The whole patch an update makes of the add-on as it is now: the merged feature definition is
 * validated again (changing value_type usually means new value/quota fields too), and a quota
 * add-on's value, which mirrors its limit, is re-derived rather than carried over.
 */
export function addonPatch(current: Addon, input: AddonUpdate): AddonPatch {
  const valueType = input.valueType ?? current.valueType;
  const typeChanges = valueType !== current.valueType;
  const keepValue = !typeChanges && valueType !== "quota";
  const feature = normalizeFeature({
    valueType,
    value: input.value !== undefined ? input.value : keepValue ? current.value : undefined,
    quotaLimit: input.quotaLimit !== undefined ? input.quotaLimit : typeChanges ? null : current.quotaLimit,
    quotaPeriod: input.quotaPeriod !== undefined ? input.quotaPeriod : typeChanges ? null : current.quotaPeriod,
  });
  return { name: input.name ?? current.name, featureName: input.featureName ?? current.featureName, ...feature };
}
