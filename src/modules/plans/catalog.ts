// The `generations` row every write to plans or plan_features bumps in its own transaction; the
// verify path's per-node plan cache (activations/catalog-cache.ts) is stamped with it.
export const CATALOG_GENERATION = "catalog";
