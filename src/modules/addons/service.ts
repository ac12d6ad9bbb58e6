// Add-on catalog verbs. Attaching add-ons to licenses lives in the licenses module (it is a license
// mutation, allowed to licenses:write keys); this module owns the catalog entries (admin only).
import type { Deps } from "../../deps";
import { AppError, validationError } from "../../shared/errors";
import { newId } from "../../shared/ids";
import { assertProductAccess, scopedProductFilter, type Actor } from "../../shared/actor";
import type { Effects } from "../outbox/effects";
import { createdChanges, deletedChanges, diffChanges, type Changes } from "../plans/changes";
import { normalizeFeature, type FeatureSpec } from "../plans/domain";
import { addonAuditView } from "./present";
import type { Addon } from "./repo";

export interface CreateAddonInput extends FeatureSpec {
  productId: string;
  name: string;
  featureName: string;
}

/** Fields a PATCH may carry; undefined = keep. `null` clears quota fields. */
export interface UpdateAddonInput extends Partial<FeatureSpec> {
  name?: string;
  featureName?: string;
}

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
  return await deps.repos.addons.create(addon, audit(deps, actor, "addon.create", addon, createdChanges(addonAuditView(addon))));
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
  const updated = await deps.repos.addons.update(
    id,
    (current) => {
      // Validate the merged definition: changing value_type usually means new value/quota fields too.
      const valueType = input.valueType ?? current.valueType;
      const typeChanges = valueType !== current.valueType;
      // A quota add-on's value mirrors its limit, so it is re-derived rather than carried over.
      const keepValue = !typeChanges && valueType !== "quota";
      const feature = normalizeFeature({
        valueType,
        value: input.value !== undefined ? input.value : keepValue ? current.value : undefined,
        quotaLimit: input.quotaLimit !== undefined ? input.quotaLimit : typeChanges ? null : current.quotaLimit,
        quotaPeriod: input.quotaPeriod !== undefined ? input.quotaPeriod : typeChanges ? null : current.quotaPeriod,
      });
      return { name: input.name ?? current.name, featureName: input.featureName ?? current.featureName, ...feature };
    },
    deps.clock.now(),
    (before, after) => audit(deps, actor, "addon.update", after, diffChanges(addonAuditView(before), addonAuditView(after))),
  );
  if (!updated) throw notFound();
  return updated;
}

/** 409 CONFLICT while any license has the add-on attached. */
export async function deleteAddon(deps: Deps, actor: Actor, id: string): Promise<void> {
  await getAddon(deps, actor, id);
  const gone = await deps.repos.addons.delete(id, (before) => audit(deps, actor, "addon.delete", before, deletedChanges(addonAuditView(before))));
  if (!gone) throw notFound();
}
