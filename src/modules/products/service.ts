import type { Deps } from "../../deps";
import { AppError } from "../../shared/errors";
import { newId } from "../../shared/ids";
import { assertProductAccess, assertSystemWide, scopedProductFilter, type Actor } from "../../shared/actor";
import type { Distribution, Product, ProductPatch } from "./repo";

export interface CreateProductInput {
  name: string;
  slug: string;
  distribution?: Distribution;
  minimumSupportedVersion?: string | null;
  minimumSupportedMessage?: string | null;
}

const audit = (deps: Deps, actor: Actor, action: string, p: { id: string }, changes: Record<string, unknown> | null) => ({
  actor,
  action,
  entityType: "product",
  entityId: p.id,
  productId: p.id,
  changes,
  at: deps.clock.now(),
});

export function createProduct(deps: Deps, actor: Actor, input: CreateProductInput): Product {
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
  return deps.repos.products.create(product, audit(deps, actor, "product.create", product, { ...input }));
}

/** Loads a product the actor may see: 404 when missing, 403 PRODUCT_SCOPE_MISMATCH for a bound key's other products. */
export function getProduct(deps: Deps, actor: Actor, id: string): Product {
  const product = deps.repos.products.findById(id);
  if (!product) throw new AppError("NOT_FOUND", { message: "Product not found." });
  assertProductAccess(actor, product.id);
  return product;
}

export function listProducts(deps: Deps, actor: Actor, productId?: string): Product[] {
  return deps.repos.products.list({ productId: scopedProductFilter(actor, productId) });
}

export function updateProduct(deps: Deps, actor: Actor, id: string, patch: ProductPatch): Product {
  getProduct(deps, actor, id);
  const updated = deps.repos.products.update(id, patch, deps.clock.now(), audit(deps, actor, "product.update", { id }, { ...patch }));
  if (!updated) throw new AppError("NOT_FOUND", { message: "Product not found." });
  return updated;
}

export function deleteProduct(deps: Deps, actor: Actor, id: string): void {
  getProduct(deps, actor, id);
  if (!deps.repos.products.delete(id, audit(deps, actor, "product.delete", { id }, null))) {
    throw new AppError("NOT_FOUND", { message: "Product not found." });
  }
}
