// The composite admin view of a license: the license with its plan, add-ons, effective features,
// activations and live floating sessions. Above the leaf modules it reads (licenses, activations,
// floating, plans, addons), so none of them imports it.
import type { Deps } from "../../deps";
import type { Actor } from "../../shared/actor";
import type { Plan } from "../plans/repo";
import type { Addon } from "../addons/repo";
import { mergeFeatures, type EffectiveFeature } from "../addons/domain";
import type { Activation } from "../activations/repo";
import type { FloatingSession } from "../floating/repo";
import type { License } from "../licenses/repo";
import { getLicense, issueLicense, revealLicenseKey, type IssueLicenseInput } from "../licenses/service";
import { ACTIVATION_PAGE, activationPage } from "../activations/service";
import { pageRequest } from "../../db/cursor";

/** Everything the admin view of one license shows. */
export interface LicenseDetail {
  license: License;
  key: string;
  plan: Plan;
  addons: Addon[];
  features: EffectiveFeature[];
  /** The first page of activations (ACTIVATION_PAGE.max, oldest first); the rest through activationsNextCursor. */
  activations: Activation[];
  activationsNextCursor: string | null;
  /** Live (unexpired) floating sessions. */
  floatingSessions: FloatingSession[];
}

export async function detailOf(deps: Deps, license: License, key?: string): Promise<LicenseDetail> {
  const plan = (await deps.repos.plans.findById(license.planId))!; // licenses → plans is ON DELETE RESTRICT
  const addons = await deps.repos.addons.forLicense(license.id);
  const activations = await activationPage(deps, license.id, { limit: ACTIVATION_PAGE.max, cursor: null });
  return {
    license,
    key: key ?? revealLicenseKey(deps, license),
    plan,
    addons,
    features: mergeFeatures(plan.quotaPeriod, await deps.repos.plans.features(plan.id), addons),
    activations: activations.items,
    activationsNextCursor: activations.nextCursor,
    floatingSessions: await deps.repos.floating.listActive(license.id, deps.clock.now()),
  };
}

/** POST /admin/licenses: issue, then answer with the full admin view (including the new key). */
export async function createLicense(deps: Deps, actor: Actor, input: IssueLicenseInput): Promise<LicenseDetail> {
  const { license, key } = await issueLicense(deps, actor, input);
  return await detailOf(deps, license, key);
}

/** GET /admin/licenses/{id}/activations: a page of the license's activations, oldest first. */
export async function getLicenseActivations(
  deps: Deps,
  actor: Actor,
  id: string,
  opts: { limit?: number; cursor?: string | null },
): Promise<{ items: Activation[]; nextCursor: string | null }> {
  const page = pageRequest(opts, ACTIVATION_PAGE);
  const license = await getLicense(deps, actor, id);
  return await activationPage(deps, license.id, page);
}

export async function getLicenseDetail(deps: Deps, actor: Actor, id: string): Promise<LicenseDetail> {
  return await detailOf(deps, await getLicense(deps, actor, id));
}

