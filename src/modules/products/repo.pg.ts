import { asc, eq, sql } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { rethrowConstraint } from "../../db/errors";
import { products } from "../../db/schema-pg";
import type { Product, ProductRepo } from "./repo";

type Row = typeof products.$inferSelect;
const toProduct = (r: Row): Product => ({ ...r });

export function createProductRepoPg(handle: PgHandle): ProductRepo {
  const { db } = handle;
  return {
    async create(product) {
      try {
        return await db.transaction(async (tx) => {
          await tx.insert(products).values(product);
          return product;
        });
      } catch (e) {
        rethrowConstraint(e, { unique: `The slug "${product.slug}" is already taken.` });
      }
    },
    async findById(id) {
      const [r] = await db.select().from(products).where(eq(products.id, id));
      return r ? toProduct(r) : null;
    },
    async findBySlug(slug) {
      const [r] = await db.select().from(products).where(eq(products.slug, slug));
      return r ? toProduct(r) : null;
    },
    async list({ productId }) {
      const q = db.select().from(products);
      // COLLATE "C": the id tie-breaker compares bytes, as SQLite does.
      const rows = await (productId ? q.where(eq(products.id, productId)) : q).orderBy(
        asc(products.createdAt),
        sql`${products.id} COLLATE "C"`,
      );
      return rows.map(toProduct);
    },
    async update(id, patch, at) {
      try {
        return await db.transaction(async (tx) => {
          // A product edit can change what its feeds show (name, slug, supported-version floor), so it
          // moves the feed generation too (see src/modules/feeds/cache.ts). The increment is relative,
          // so concurrent edits and release publishes on other nodes each move it.
          const [after] = await tx
            .update(products)
            .set({ ...patch, updatedAt: at, releaseGeneration: sql`${products.releaseGeneration} + 1` })
            .where(eq(products.id, id))
            .returning();
          if (!after) return null;
          return toProduct(after);
        });
      } catch (e) {
        rethrowConstraint(e, { unique: `The slug "${patch.slug}" is already taken.` });
      }
    },
    async delete(id) {
      try {
        return await db.transaction(async (tx) => {
          const gone = await tx.delete(products).where(eq(products.id, id)).returning({ id: products.id });
          if (gone.length === 0) return false;
          return true;
        });
      } catch (e) {
        rethrowConstraint(e, { foreignKey: "The product still has plans, add-ons, licenses or releases." });
      }
    },
  };
}
