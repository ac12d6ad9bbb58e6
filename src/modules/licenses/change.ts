// The one way a license row is written inside a unit of work (DataStore.transaction). A change: the
// row locked, the caller's pure decision on it, the past_due episode rule of domain.ts, the write,
// and the change's effects, together. An issue: the row, its add-ons and the effects.
// Verbs of this module and of payments call them with their unit's repositories; the repository
// itself decides nothing.
import type { Repos } from "../../deps";
import type { Effects } from "../outbox/effects";
import { withPastDueEpisode } from "./domain";
import type { License, LicensePatch } from "./repo";

export async function changeLicense(
  repos: Pick<Repos, "licenses" | "outbox">,
  id: string,
  decide: (current: License) => LicensePatch,
  at: Date,
  effects: (before: License, patch: LicensePatch) => Effects,
  opts: { clearActivations?: boolean } = {},
): Promise<License | null> {
  // The lock makes `decide` see the row as committed and serialises racing changes, and
  // activations and checkouts (which lock the same row) with a revoke.
  const before = await repos.licenses.lock(id);
  if (!before) return null;
  const patch = withPastDueEpisode(before, decide(before), at);
  const after = await repos.licenses.update(id, patch, at, opts);
  await repos.outbox.writeEffects(effects(before, patch));
  return after;
}

/**
 * A new license (licenses/service.ts buildLicense) with its add-on links and the effects
 * (audit row, license.created, a purchase's key email), in the caller's unit of work. The key goes
 * to a caller that will not ask again (an integration that emails it, a purchase): the unit must be
 * durable (DataStore.transaction's `durable`; the Stripe webhook's already is). Throws CONFLICT on a
 * key hash collision or an unknown product, plan or add-on, and the unit writes nothing.
 */
export async function createLicense(repos: Pick<Repos, "licenses" | "outbox">, license: License, addonIds: string[], effects: Effects): Promise<License> {
  const created = await repos.licenses.create(license, addonIds);
  await repos.outbox.writeEffects(effects);
  return created;
}
