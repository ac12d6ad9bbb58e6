// Plans and their features change rarely and are read by every verify. A node keeps them in memory,
// stamped with the `catalog` generation (db/schema coordination.ts: `generations`), which every plan
// or feature write bumps in the write's own transaction (plans/repo.sql.ts, plans/catalog.ts) and which verify reads in its one
// statement. An entry is used only under the generation the request itself read from the database,
// so a change made through any node is seen by the next verify on every node: no time-based expiry,
// no stale window. No SQL here: the repositories read the stamp and load entries.
import type { FeatureGrant } from "../entitlements/repo";
import type { PublicPlan } from "../license-api/repo";

import { CATALOG_GENERATION } from "../plans/catalog";

export { CATALOG_GENERATION };

export interface CachedPlan {
  plan: Readonly<PublicPlan>;
  /** The plan's feature grants in name order (source "plan"); frozen: callers copy before adding. */
  grants: readonly FeatureGrant[];
}

/** Plans kept per node; past this the cache starts over (a product catalog is far smaller). */
const MAX_PLANS = 10_000;

export interface CatalogCache {
  /** The plan as cached under `generation`; a different generation empties the cache. */
  get(generation: number, planId: string): CachedPlan | undefined;
  /** Keeps a plan loaded after reading `generation`, unless another generation has been seen since. */
  set(generation: number, planId: string, entry: CachedPlan): void;
}

export function createCatalogCache(): CatalogCache {
  let current = Number.NaN;
  let plans = new Map<string, CachedPlan>();
  return {
    get(generation, planId) {
      if (generation !== current) {
        // Any change, also to an older stamp (a request that read before the bump, a restored
        // database): start over. Entries are only ever as old as the stamp they were loaded under.
        current = generation;
        plans = new Map();
        return undefined;
      }
      return plans.get(planId);
    },
    set(generation, planId, entry) {
      if (generation !== current) return;
      if (plans.size >= MAX_PLANS) plans = new Map();
      plans.set(planId, entry);
    },
  };
}

/** Freezes a loaded plan so that no caller can change the shared copy. */
export function cachedPlan(plan: PublicPlan, grants: FeatureGrant[]): CachedPlan {
  for (const g of grants) Object.freeze(g);
  return { plan: Object.freeze(plan), grants: Object.freeze(grants) };
}
