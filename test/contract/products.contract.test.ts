// ProductRepo on every engine: its rows (the verbs in products/service.ts write the audit rows in the
// same unit of work), slug conflicts, the byte-order id tie-breaker, and the release generation
// every edit moves, also when edits race from three nodes.
import { afterEach, expect, test } from "bun:test";
import type { Product, ProductRepo } from "../../src/modules/products/repo";
import { forEachEngine, type Opened } from "./harness";
import { SEED_TIME, seedPlan, seedProduct } from "./seed";
import { repoFor } from "./repos";
import { AT, auditActions, audited, rejection } from "./rows";
import { withPgUnits } from "./unit";

function product(over: Partial<Product> = {}): Product {
  const id = crypto.randomUUID();
  return {
    id,
    name: "Editor",
    slug: `editor-${id.slice(0, 8)}`,
    distribution: "licensed",
    minimumSupportedVersion: "1.2.0",
    minimumSupportedMessage: "Please update.",
    releaseGeneration: 0,
    createdAt: SEED_TIME,
    updatedAt: SEED_TIME,
    ...over,
  };
}

forEachEngine("ProductRepo", (engine, open) => {
  let o: Opened;
  let repo: ProductRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).products;
  };
  afterEach(() => o?.close());

  test("create stores the product (the repository writes no audit row); find by id and slug; null for unknown", async () => {
    await setup();
    const p = product();
    expect(await repo.create(p)).toEqual(p);
    expect(await repo.findById(p.id)).toEqual(p);
    expect(await repo.findBySlug(p.slug)).toEqual(p);
    expect(await repo.findById("nope")).toBeNull();
    expect(await repo.findBySlug("nope")).toBeNull();
    expect(await auditActions(o)).toEqual([]); // the verbs write the audit rows
  });

  test("create refuses a taken slug with CONFLICT and writes nothing", async () => {
    await setup();
    const first = await seedProduct(o, { slug: "taken" });
    const err = await rejection(repo.create(product({ slug: "taken" })));
    expect(err).toEqual({ code: "CONFLICT", message: 'The slug "taken" is already taken.' });
    expect((await repo.list({})).map((p) => p.id)).toEqual([first.id]);
    expect(await auditActions(o)).toEqual([]);
  });

  test("list orders by creation time, then id in byte order; filters by product", async () => {
    await setup();
    const later = new Date(SEED_TIME.getTime() + 1);
    // Byte order puts upper case first and does not skip punctuation (a collation would not).
    for (const id of ["aa", "Zed", "a-b", "abc"]) await seedProduct(o, { id });
    await seedProduct(o, { id: "0-first-id-but-later", createdAt: later });
    expect((await repo.list({})).map((p) => p.id)).toEqual(["Zed", "a-b", "aa", "abc", "0-first-id-but-later"]);
    expect((await repo.list({ productId: "aa" })).map((p) => p.id)).toEqual(["aa"]);
    expect(await repo.list({ productId: "nope" })).toEqual([]);
  });

  test("update patches, stamps updatedAt, moves the release generation; null for unknown", async () => {
    await setup();
    const p = await seedProduct(o, { releaseGeneration: 4 });
    const updated = await repo.update(p.id, { name: "Renamed", minimumSupportedVersion: null }, AT);
    const expected = { ...p, name: "Renamed", minimumSupportedVersion: null, releaseGeneration: 5, updatedAt: AT };
    expect(updated).toEqual(expected);
    expect(await repo.findById(p.id)).toEqual(expected);
    expect(await repo.update("nope", { name: "x" }, AT)).toBeNull();
    expect(await auditActions(o)).toEqual([]);
  });

  test("update refuses a taken slug with CONFLICT and changes nothing", async () => {
    await setup();
    await seedProduct(o, { slug: "taken" });
    const p = await seedProduct(o);
    const err = await rejection(repo.update(p.id, { slug: "taken", name: "x" }, AT));
    expect(err).toEqual({ code: "CONFLICT", message: 'The slug "taken" is already taken.' });
    expect(await repo.findById(p.id)).toEqual(p);
    expect(await auditActions(o)).toEqual([]);
  });

  test("delete removes; false for unknown; CONFLICT while a plan references the product", async () => {
    await setup();
    const gone = await seedProduct(o);
    const used = await seedProduct(o);
    await seedPlan(o, used.id);
    expect(await repo.delete(gone.id)).toBe(true);
    expect(await repo.findById(gone.id)).toBeNull();
    expect(await repo.delete(gone.id)).toBe(false);
    const err = await rejection(repo.delete(used.id));
    expect(err).toEqual({ code: "CONFLICT", message: "The product still has plans, add-ons, licenses or releases." });
    expect(await repo.findById(used.id)).toEqual(used);
    expect(await auditActions(o)).toEqual([]);
  });

  if (engine === "postgres") {
    test("concurrent edits (the verb's unit: update, audit) from three nodes each move the release generation exactly once", async () => {
      await setup();
      const p = await seedProduct(o);
      await withPgUnits(o, 3, (units) =>
        Promise.all(
          Array.from({ length: 24 }, (_, i) =>
            units[i % 3]!(async (r) => {
              await r.products.update(p.id, { name: `n${i}` }, AT);
              await r.outbox.writeEffects(audited("product.update"));
            }),
          ),
        ),
      );
      expect((await repo.findById(p.id))!.releaseGeneration).toBe(24);
      expect((await auditActions(o)).length).toBe(24);
    });
  }
});

