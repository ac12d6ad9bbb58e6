// Add-on catalog verbs. Attaching add-ons to licenses lives in the licenses module (it is a license
// mutation, allowed to licenses:write keys); this module owns the catalog entries (admin only).
import type { Deps } from "../../deps";
import { AppError, validationError } from "../../shared/errors";
import { newId } from "../../shared/ids";
import { assertProductAccess, scopedProductFilter, type Actor } from "../../shared/actor";
import type { Effects } from "../outbox/effects";
import { createdChanges, deletedChanges, diffChanges, type Changes } from "../plans/changes";
import { normalizeFeature, type FeatureSpec } from "../plans/domain";
import { addonPatch, type AddonUpdate } from "./domain";
import { addonAuditView } from "./present";
import type { Addon } from "./repo";

export interface CreateAddonInput extends FeatureSpec {
  productId: string;
  name: string;
  featureName: string;
}

/** Fields a PATCH may carry (domain.ts addonPatch). */
export type UpdateAddonInput = AddonUpdate;

const audit = (deps: Deps, actor: Actor, action: string, a: Pick<Addon, "id" | "productId">, changes: Changes): Effects => ({
  audit: {
    actor,
    action,
    entityType: "addon",
    entityId: a.id,
    productId: a.productId,
    changes,
    at: deps.clock.now(),
  },
});

const notFound = () => new AppError("NOT_FOUND", { message: "Add-on not found." });

export async function createAddon(deps: Deps, actor: Actor, input: CreateAddonInput): Promise<Addon> {
  assertProductAccess(actor, input.productId);
  if (!await deps.repos.products.findById(input.productId)) throw validationError({ product_id: "unknown product" });
  const now = deps.clock.now();
  const addon: Addon = {
    id: newId(),
    productId: input.productId,
    name: input.name,
    featureName: input.featureName,
    ...normalizeFeature(input),
    createdAt: now,
    updatedAt: now,
  };
  return await deps.db.transaction(async ({ repos }) => {
    const created = await repos.addons.create(addon);
    await repos.outbox.writeEffects(audit(deps, actor, "addon.create", addon, createdChanges(addonAuditView(addon))));
    return created;
  });
}

/** 404 when missing, 403 PRODUCT_SCOPE_MISMATCH for a bound key's other products. */
export async function getAddon(deps: Deps, actor: Actor, id: string): Promise<Addon> {
  const addon = await deps.repos.addons.findById(id);
  if (!addon) throw notFound();
  assertProductAccess(actor, addon.productId);
  return addon;
}

export async function listAddons(deps: Deps, actor: Actor, productId: string | undefined): Promise<Addon[]> {
  return await deps.repos.addons.list({ productId: scopedProductFilter(actor, productId) });
}

export async function updateAddon(deps: Deps, actor: Actor, id: string, input: UpdateAddonInput): Promise<Addon> {
  await getAddon(deps, actor, id);
  // One unit of work: the add-on held, the patch decided on it (domain.ts), written with its audit row.
  const updated = await deps.db.transaction(async ({ repos }) => {
    const before = await repos.addons.lock(id);
    if (!before) return null;
    const after = await repos.addons.update(id, addonPatch(before, input), deps.clock.now());
    await repos.outbox.writeEffects(audit(deps, actor, "addon.update", after, diffChanges(addonAuditView(before), addonAuditView(after))));
    return after;
  });
  if (!updated) throw notFound();
  return updated;
}

/** 409 CONFLICT while any license has the add-on attached. */
export async function deleteAddon(deps: Deps, actor: Actor, id: string): Promise<void> {
  await getAddon(deps, actor, id);
  const gone = await deps.db.transaction(async ({ repos }) => {
    const before = await repos.addons.lock(id);
    if (!before) return false;
    await repos.addons.delete(id);
    await repos.outbox.writeEffects(audit(deps, actor, "addon.delete", before, deletedChanges(addonAuditView(before))));
    return true;
  });
  if (!gone) throw notFound();
}
