import { asc, eq, sql } from "drizzle-orm";
import { lift, immediate, type DbHandle } from "../../db/client";
import { rethrowConstraint } from "../../db/errors";
import { products } from "../../db/schema";
import type { Product, ProductRepo } from "./repo";

type Row = typeof products.$inferSelect;
const toProduct = (r: Row): Product => ({ ...r });

export function createProductRepo(handle: DbHandle): ProductRepo {
  const { db } = handle;
  const findById = (id: string) => {
    const r = db.select().from(products).where(eq(products.id, id)).get();
    return r ? toProduct(r) : null;
  };
  return {
    async create(product) {
      try {
        return immediate(handle, () => {
          db.insert(products).values(product).run();
          return product;
        });
      } catch (e) {
        rethrowConstraint(e, { unique: `The slug "${product.slug}" is already taken.` });
      }
    },
    findById: lift(findById),
    async findBySlug(slug) {
      const r = db.select().from(products).where(eq(products.slug, slug)).get();
      return r ? toProduct(r) : null;
    },
    async list({ productId }) {
      const q = db.select().from(products);
      return (productId ? q.where(eq(products.id, productId)) : q).orderBy(asc(products.createdAt), asc(products.id)).all().map(toProduct);
    },
    async update(id, patch, at) {
      try {
        return immediate(handle, () => {
          const before = findById(id);
          if (!before) return null;
          // A product edit can change what its feeds show (name, slug, supported-version floor), so it
          // moves the feed generation too (see src/modules/feeds/cache.ts).
          db.update(products)
            .set({ ...patch, updatedAt: at, releaseGeneration: sql`${products.releaseGeneration} + 1` })
            .where(eq(products.id, id))
            .run();
          return findById(id);
        });
      } catch (e) {
        rethrowConstraint(e, { unique: `The slug "${patch.slug}" is already taken.` });
      }
    },
    async delete(id) {
      try {
        return immediate(handle, () => {
          const gone = db.delete(products).where(eq(products.id, id)).returning({ id: products.id }).all();
          if (gone.length === 0) return false;
          return true;
        });
      } catch (e) {
        rethrowConstraint(e, { foreignKey: "The product still has plans, add-ons, licenses or releases." });
      }
    },
  };
}
