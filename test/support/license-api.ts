// Helpers for the public license API tests.
import type { TestApp, TestResponse } from "./app";
import { makeCatalog } from "./factories";
import { SYSTEM_ACTOR } from "../../src/shared/actor";
import { newId } from "../../src/shared/ids";
import { createAddon } from "../../src/modules/addons/service";
import { attachLicenseAddon } from "../../src/modules/licenses/service";
import type { Plan, PlanFeature } from "../../src/modules/plans/repo";
import type { LicensePatch } from "../../src/modules/licenses/repo";
import { changeLicenseNow } from "./license-change";

export type FeatureSpec = Omit<PlanFeature, "id" | "planId" | "createdAt" | "stripeMeter"> & { stripeMeter?: string | null };

export const feature = (name: string, over: Partial<FeatureSpec> = {}): FeatureSpec => ({
  name,
  valueType: "bool",
  value: "true",
  quotaLimit: null,
  quotaPeriod: null,
  ...over,
});

export const quota = (name: string, limit: number | null, period: FeatureSpec["quotaPeriod"] = null): FeatureSpec =>
  feature(name, { valueType: "quota", value: String(limit ?? ""), quotaLimit: limit, quotaPeriod: period });

/** POST to a public license route (no API key). */
export function post<T = any>(t: TestApp, path: string, body: unknown, headers: Record<string, string> = {}): Promise<TestResponse<T>> {
  return t.request("POST", `/api/v1${path}`, { body, headers, key: null });
}

export async function catalog(t: TestApp, planOver: Partial<Plan> = {}, features: FeatureSpec[] = []) {
  return await makeCatalog(t.deps, planOver, features);
}

export async function patchLicense(t: TestApp, licenseId: string, patch: LicensePatch, opts: { clearActivations?: boolean } = {}) {
  await changeLicenseNow(t.deps, 
    licenseId,
    () => patch,
    t.clock.now(),
    () => ({ audit: { actor: SYSTEM_ACTOR, action: "test.patch", entityType: "license", entityId: licenseId, productId: null, changes: null, at: t.clock.now() } }),
    opts,
  );
}

/** An add-on attached to a license, through the catalog's add-on and license services. */
export async function attachAddon(t: TestApp, productId: string, licenseId: string, f: FeatureSpec) {
  const addon = await createAddon(t.deps, SYSTEM_ACTOR, {
    productId,
    name: `addon-${newId().slice(-8)}`,
    featureName: f.name,
    valueType: f.valueType,
    value: f.value,
    quotaLimit: f.quotaLimit,
    quotaPeriod: f.quotaPeriod,
  });
  await attachLicenseAddon(t.deps, SYSTEM_ACTOR, licenseId, addon.id);
  return addon.id;
}

export function decodeToken(token: string): Record<string, any> {
  return JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString("utf8"));
}
