
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

/** Product rows: the verbs (service.ts) write their audit rows in the same unit of work. */
export interface ProductRepo {
  /** Throws AppError CONFLICT when the slug is taken. */
  create(product: Product): Promise<Product>;
  findById(id: string): Promise<Product | null>;
  findBySlug(slug: string): Promise<Product | null>;
  list(filter: { productId?: string }): Promise<Product[]>;
  /** Returns null when the product does not exist. Throws CONFLICT on a taken slug. */
  update(id: string, patch: ProductPatch, at: Date): Promise<Product | null>;
  /** Throws CONFLICT while plans, licenses or releases still reference the product. */
  delete(id: string): Promise<boolean>;
}
