import type { Effects } from "../outbox/effects";

export type Distribution = "open" | "licensed";

export interface Product {
  id: string;
  name: string;
  slug: string;
  distribution: Distribution;
  minimumSupportedVersion: string | null;
  minimumSupportedMessage: string | null;
  /** Changes with every change to what the product's feeds show (cache key for rendered feeds). */
  releaseGeneration: number;
  createdAt: Date;
  updatedAt: Date;
}

export type ProductPatch = Partial<
  Pick<Product, "name" | "slug" | "distribution" | "minimumSupportedVersion" | "minimumSupportedMessage">
>;

export interface ProductRepo {
  /** Throws AppError CONFLICT when the slug is taken. */
  create(product: Product, effects: Effects): Promise<Product>;
  findById(id: string): Promise<Product | null>;
  findBySlug(slug: string): Promise<Product | null>;
  list(filter: { productId?: string }): Promise<Product[]>;
  /** Returns null when the product does not exist. Throws CONFLICT on a taken slug. */
  update(id: string, patch: ProductPatch, at: Date, effects: Effects): Promise<Product | null>;
  /** Throws CONFLICT while plans, licenses or releases still reference the product. */
  delete(id: string, effects: Effects): Promise<boolean>;
}
