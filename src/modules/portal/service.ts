// Portal self-service (cookie session): the caller's licenses and their activations, with
// self-service deactivation — the lost-laptop case. Sits above seats, licenses and activations.
import type { Deps } from "../../deps";
import type { License } from "../licenses/repo";
import { revealLicenseKey } from "../licenses/service";
import type { Activation } from "../activations/repo";
import { removeActivation } from "../activations/service";
import { portalActor, portalLicense, type PortalCaller } from "../seats/service";
import type { PortalRole } from "../seats/domain";

export interface MyLicense {
  license: License;
  /** Decrypted: the owner and seat holders need it for the seat routes and in their apps. */
  key: string;
  role: PortalRole;
  productName: string;
  planName: string;
  maxSeats: number | null;
  usedSeats: number;
}

/**
 * GET /portal/licenses: licenses whose owner email is the caller's (case-insensitively), newest
 * first, then licenses the caller holds an accepted seat on, in acceptance order. A license both
 * owned and seated is listed once, as owner.
 */
export async function myLicenses(deps: Deps, caller: PortalCaller): Promise<MyLicense[]> {
  const owned = await deps.repos.seats.licensesOwnedBy(caller.user.email);
  const seen = new Set(owned.map((l) => l.id));
  const rows: { license: License; role: PortalRole }[] = owned.map((license) => ({ license, role: "owner" }));
  for (const seat of await deps.repos.seats.acceptedSeatsOf(caller.user.id)) {
    if (seen.has(seat.licenseId)) continue;
    const license = await deps.repos.licenses.findById(seat.licenseId);
    if (!license) continue;
    seen.add(license.id);
    rows.push({ license, role: seat.role });
  }
  const counts = await deps.repos.seats.countActive(rows.map((r) => r.license.id));
  const plans = new Map<string, { name: string; maxSeats: number | null }>();
  const products = new Map<string, string>();
  const out: MyLicense[] = [];
  for (const { license, role } of rows) {
    if (!plans.has(license.planId)) {
      const plan = await deps.repos.plans.findById(license.planId);
      plans.set(license.planId, { name: plan?.name ?? "", maxSeats: plan?.maxSeats ?? null });
    }
    if (!products.has(license.productId)) products.set(license.productId, (await deps.repos.products.findById(license.productId))?.name ?? "");
    const plan = plans.get(license.planId)!;
    out.push({
      license,
      key: revealLicenseKey(deps, license),
      role,
      productName: products.get(license.productId)!,
      planName: plan.name,
      maxSeats: plan.maxSeats,
      usedSeats: counts.get(license.id) ?? 0,
    });
  }
  return out;
}

/** POST /portal/activations: the owner and every accepted seat may see a license's activations. */
export async function myActivations(deps: Deps, caller: PortalCaller, licenseKey: string): Promise<{ license: License; activations: Activation[] }> {
  const { license } = await portalLicense(deps, caller, licenseKey, "view");
  return { license, activations: await deps.repos.activations.listByLicense(license.id) };
}

/**
 * POST /portal/activations/deactivate: frees the slot, for the owner and accepted admin seats (a
 * member, a pending invite or an unrelated user gets 404 LICENSE_NOT_FOUND). The same verb as the
 * admin removal, so the same effects: audit row `activation.remove` (naming the session's user) and
 * event `activation.deleted` with reason `removed`. An activation id not on this license: 404 NOT_FOUND.
 */
export async function deactivateMine(deps: Deps, caller: PortalCaller, input: { licenseKey: string; activationId: string }): Promise<Activation> {
  const { license } = await portalLicense(deps, caller, input.licenseKey, "manage");
  return await removeActivation(deps, portalActor(caller), license.id, input.activationId);
}
