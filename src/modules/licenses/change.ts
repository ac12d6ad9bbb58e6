// The one way a license row changes inside a unit of work (DataStore.transaction): the row locked,
// the caller's pure decision on it, the past_due episode rule of domain.ts, the write, and the
// change's effects, together. Verbs of this module and of payments call it with their unit's
// repositories; the repository itself decides nothing.
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
