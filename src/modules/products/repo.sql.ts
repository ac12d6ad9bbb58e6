// ProductRepo on both engines, written once against the query seam (db/dialect/query.ts). Each
// method is one statement: in the verb's unit of work it commits with the audit row (service.ts).
import { asc, eq, sql } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import { rethrowConstraint } from "../../db/errors";
import type { ProductRepo } from "./repo";

export function createProductRepo(d: QueryDialect): ProductRepo {
  const { db } = d;
  const { products } = d.tables;
  return {
    async create(product) {
      try {
        await db.insert(products).values(product);
        return product;
      } catch (e) {
        rethrowConstraint(e, { unique: `The slug "${product.slug}" is already taken.` });
      }
    },
    async findById(id) {
      return (await db.select().from(products).where(eq(products.id, id)))[0] ?? null;
    },
    async findBySlug(slug) {
      return (await db.select().from(products).where(eq(products.slug, slug)))[0] ?? null;
    },
    async list({ productId }) {
      // The id tie-breaker compares bytes on both engines.
      return await db
        .select()
        .from(products)
        .where(productId ? eq(products.id, productId) : undefined)
        .orderBy(asc(products.createdAt), d.byteOrder(products.id));
    },
    async update(id, patch, at) {
      try {
        // A product edit can change what its feeds show (name, slug, supported-version floor), so it
        // moves the feed generation too (see src/modules/feeds/cache.ts). The increment is relative,
        // so concurrent edits and release publishes on other nodes each move it.
        const [after] = await db
          .update(products)
          .set({ ...patch, updatedAt: at, releaseGeneration: sql`${products.releaseGeneration} + 1` })
          .where(eq(products.id, id))
          .returning();
        return after ?? null;
      } catch (e) {
        rethrowConstraint(e, { unique: `The slug "${patch.slug}" is already taken.` });
      }
    },
    async delete(id) {
      try {
        return (await db.delete(products).where(eq(products.id, id)).returning({ id: products.id })).length > 0;
      } catch (e) {
        rethrowConstraint(e, { foreignKey: "The product still has plans, add-ons, licenses or releases." });
      }
    },
  };
}
