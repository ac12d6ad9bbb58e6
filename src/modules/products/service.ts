import type { Deps } from "../../deps";
import { AppError } from "../../shared/errors";
import { newId } from "../../shared/ids";
import { assertProductAccess, assertSystemWide, scopedProductFilter, type Actor } from "../../shared/actor";
import type { Distribution, Product, ProductPatch } from "./repo";
import type { Effects } from "../outbox/effects";

export interface CreateProductInput {
  name: string;
  slug: string;
  distribution?: Distribution;
  minimumSupportedVersion?: string | null;
  minimumSupportedMessage?: string | null;
}

const audit = (deps: Deps, actor: Actor, action: string, p: { id: string }, changes: Record<string, unknown> | null): Effects => ({
  audit: {
    actor,
    action,
    entityType: "product",
    entityId: p.id,
    productId: p.id,
    changes,
    at: deps.clock.now(),
  },
});

export async function createProduct(deps: Deps, actor: Actor, input: CreateProductInput): Promise<Product> {
  // Creating a product is system-wide: a product-bound key cannot mint new products.
  assertSystemWide(actor);
  const now = deps.clock.now();
  const product: Product = {
    id: newId(),
    name: input.name,
    slug: input.slug,
    distribution: input.distribution ?? "open",
    minimumSupportedVersion: input.minimumSupportedVersion ?? null,
    minimumSupportedMessage: input.minimumSupportedMessage ?? null,
    releaseGeneration: 0,
    createdAt: now,
    updatedAt: now,
  };
  return await deps.db.transaction(async ({ repos }) => {
    const created = await repos.products.create(product);
    await repos.outbox.writeEffects(audit(deps, actor, "product.create", product, { ...input }));
    return created;
  });
}

/** Loads a product the actor may see: 404 when missing, 403 PRODUCT_SCOPE_MISMATCH for a bound key's other products. */
export async function getProduct(deps: Deps, actor: Actor, id: string): Promise<Product> {
  const product = await deps.repos.products.findById(id);
  if (!product) throw new AppError("NOT_FOUND", { message: "Product not found." });
  assertProductAccess(actor, product.id);
  return product;
}

export async function listProducts(deps: Deps, actor: Actor, productId?: string): Promise<Product[]> {
  return await deps.repos.products.list({ productId: scopedProductFilter(actor, productId) });
}

export async function updateProduct(deps: Deps, actor: Actor, id: string, patch: ProductPatch): Promise<Product> {
  await getProduct(deps, actor, id);
  const updated = await deps.db.transaction(async ({ repos }) => {
    const row = await repos.products.update(id, patch, deps.clock.now());
    if (row) await repos.outbox.writeEffects(audit(deps, actor, "product.update", { id }, { ...patch }));
    return row;
  });
  if (!updated) throw new AppError("NOT_FOUND", { message: "Product not found." });
  return updated;
}

export async function deleteProduct(deps: Deps, actor: Actor, id: string): Promise<void> {
  await getProduct(deps, actor, id);
  const deleted = await deps.db.transaction(async ({ repos }) => {
    const gone = await repos.products.delete(id);
    if (gone) await repos.outbox.writeEffects(audit(deps, actor, "product.delete", { id }, null));
    return gone;
  });
  if (!deleted) {
    throw new AppError("NOT_FOUND", { message: "Product not found." });
  }
}
