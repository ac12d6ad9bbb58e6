// The `generations` row every write to plans or plan_features bumps in the write's own transaction
// (the verb's unit of work, plans/service.ts); the verify path's per-node plan cache
// (activations/catalog-cache.ts) is stamped with it.
export const CATALOG_GENERATION = "catalog";
