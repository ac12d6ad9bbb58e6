// Metered usage against quotas (spec: POST /license/usage, /license/usage/status; License rule 3;
// Usage counter). Admin views and resets of the counters.
import type { Deps } from "../../deps";
import type { Recorder } from "../idempotency/repo";
import { AppError, validationError } from "../../shared/errors";
import type { Actor } from "../../shared/actor";
import { getLicense } from "../licenses/service";
import { isUsableAccess, licenseNotFound, requireUsableLicense, type PublicLicenseInput } from "../license-api/access";
import type { LicenseAccess } from "../license-api/repo";
import { featureView, licenseEntitlements, requireUsableLicenseWithGrants, viewOf, type FeatureView } from "../entitlements/service";
import { mergeGrants, quotaMeter, type Entitlement } from "../entitlements/domain";
import type { FeatureGrant } from "../entitlements/repo";
import { periodKey } from "../entitlements/quota";
import { quotaEvents } from "./events";

/** Metadata is stored with every event; bounded so one report cannot store megabytes. */
export const MAX_METADATA_BYTES = 4096;

export type UsageView = FeatureView & { used: number };

/**
 * The quota feature named `feature`, or 400. A feature that is missing or not a quota gets the same
 * answer, and only a caller holding a usable key gets this far: it learns nothing its own
 * entitlements call would not show (decision: 400 VALIDATION_ERROR, documented in docs/integration.md).
 */
async function quotaOf(deps: Deps, access: LicenseAccess, feature: string, grants?: readonly FeatureGrant[]): Promise<Entitlement> {
  const e = (grants ? mergeGrants(grants, access.plan.quotaPeriod) : await licenseEntitlements(deps, access)).get(feature);
  if (!e || e.valueType !== "quota") {
    throw validationError({ feature: "not a quota feature of this license" }, `Feature "${feature}" is not a usage quota on this license.`);
  }
  return e;
}

export interface UsageInput extends PublicLicenseInput {
  feature: string;
}

export interface RecordUsageInput extends UsageInput {
  quantity: number;
  /** As received: must be a JSON object (or absent). */
  metadata: unknown;
}

function checkedMetadata(metadata: unknown): Record<string, unknown> | null {
  if (metadata === undefined || metadata === null) return null;
  if (typeof metadata !== "object" || Array.isArray(metadata)) throw validationError({ metadata: "must be a JSON object" });
  if (Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES) {
    throw validationError({ metadata: `at most ${MAX_METADATA_BYTES} bytes of JSON` });
  }
  return metadata as Record<string, unknown>;
}

/**
 * `record` (Idempotency-Key) receives the result inside the write transaction of an accepted report:
 * the counter, the event and the stored outcome commit together.
 */
export async function recordUsage(deps: Deps, input: RecordUsageInput, record?: Recorder<UsageView>): Promise<UsageView> {
  const metadata = checkedMetadata(input.metadata);
  const now = deps.clock.now();
  const { access, grants } = await requireUsableLicenseWithGrants(deps, input, now);
  const quota = await quotaOf(deps, access, input.feature, grants);
  const key = periodKey(quota.period, now);
  // The counter as this report left it, from the same transaction (a re-read could include others).
  const viewAt = (used: number) => viewOf(quota, used, now) as UsageView;
  let view: UsageView | undefined;
  const result = await deps.repos.usage.consume({
    licenseId: access.license.id,
    feature: quota.name,
    periodKey: key,
    quantity: input.quantity,
    limit: quota.limit,
    metadata,
    at: now,
    meter: quotaMeter(grants, quota.name),
  }, (current) => {
    if (!current || !isUsableAccess(current, now)) throw licenseNotFound();
  }, record && ((r) => record((view = viewAt(r.used)))), (change) => ({
    events: quotaEvents(
      { licenseId: access.license.id, productId: access.license.productId, feature: quota.name, period: quota.period, periodKey: key, limit: quota.limit, quantity: input.quantity },
      change,
      now,
    ),
  }));
  if (!result.accepted) {
    throw new AppError("QUOTA_EXCEEDED", {
      message: `The ${quota.period} quota of "${quota.name}" does not allow ${input.quantity} more.`,
      details: { used: result.used, limit: quota.limit, period: quota.period, period_key: key },
    });
  }
  return view ?? viewAt(result.used);
}

export async function usageStatus(deps: Deps, input: UsageInput): Promise<UsageView> {
  const now = deps.clock.now();
  const access = await requireUsableLicense(deps, input, now);
  return (await featureView(deps, access.license.id, await quotaOf(deps, access, input.feature), now)) as UsageView;
}

async function quotaViews(deps: Deps, access: LicenseAccess, now: Date, only?: string): Promise<UsageView[]> {
  const quotas = [...(await licenseEntitlements(deps, access)).values()].filter((e) => e.valueType === "quota");
  if (only !== undefined && !quotas.some((q) => q.name === only)) {
    throw validationError({ feature: "not a quota feature of this license" });
  }
  const selected = quotas.filter((q) => only === undefined || q.name === only).sort((a, b) => (a.name < b.name ? -1 : 1));
  return (await Promise.all(selected.map((q) => featureView(deps, access.license.id, q, now)))) as UsageView[];
}

async function adminAccess(deps: Deps, actor: Actor, licenseId: string): Promise<LicenseAccess> {
  await getLicense(deps, actor, licenseId); // 404 NOT_FOUND, or 403 PRODUCT_SCOPE_MISMATCH for a bound key
  const access = await deps.repos.licenseAccess.findById(licenseId);
  if (!access) throw new AppError("NOT_FOUND", { message: "License not found." });
  return access;
}

/** Admin: every quota feature of the license with its current-period counter. */
export async function licenseUsage(deps: Deps, actor: Actor, licenseId: string): Promise<UsageView[]> {
  return await quotaViews(deps, await adminAccess(deps, actor, licenseId), deps.clock.now());
}

/** Admin: resets the current-period counters (all quota features, or one). History rows of past periods stay. */
export async function resetUsage(deps: Deps, actor: Actor, licenseId: string, feature?: string): Promise<UsageView[]> {
  const access = await adminAccess(deps, actor, licenseId);
  const now = deps.clock.now();
  const targets = await quotaViews(deps, access, now, feature);
  await deps.repos.usage.reset(
    licenseId,
    targets.map((t) => ({ feature: t.name, periodKey: t.periodKey })),
    (reset) => ({
      audit: {
        actor,
        action: "license.usage_reset",
        entityType: "license",
        entityId: licenseId,
        productId: access.license.productId,
        changes: { feature: feature ?? null, reset: reset.map((c) => ({ feature: c.feature, period_key: c.periodKey, used: c.used })) },
        at: now,
      },
    }),
  );
  return await quotaViews(deps, access, now, feature);
}
