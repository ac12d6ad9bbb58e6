// PlanRepo on every engine: plans with their features as rows (the verbs in plans/service.ts write the
// audit rows in the same unit of work: a throw rolls everything back), constraint conflicts,
// byte-order sorting, the catalog generation every write bumps in its unit, and on PostgreSQL the
// plan's row lock that makes each unit's "before" the state its change replaced.
import { afterEach, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import type { Plan, PlanFeature, PlanRepo } from "../../src/modules/plans/repo";
import { forEachEngine, type Opened } from "./harness";
import { SEED_TIME, seedLicense, seedPlan, seedProduct } from "./seed";
import { repoFor } from "./repos";
import { AT, auditActions, audited, rejection } from "./rows";
import { unitOf, withPgUnits, type Unit } from "./unit";
import { planValue } from "../support/plan-value";
import type { Repos } from "../../src/deps";
import * as sqliteSchema from "../../src/db/schema";
import * as pgSchema from "../../src/db/schema-pg";
import { CATALOG_GENERATION } from "../../src/modules/plans/catalog";

/** The catalog generation verify's plan cache is stamped with (0 before the first plan write). */
async function catalogGeneration(o: Opened): Promise<number> {
  const rows = o.sqlite
    ? o.sqlite.db.select().from(sqliteSchema.generations).where(eq(sqliteSchema.generations.name, CATALOG_GENERATION)).all()
    : await o.pg!.db.select().from(pgSchema.generations).where(eq(pgSchema.generations.name, CATALOG_GENERATION));
  return rows[0]?.value ?? 0;
}

/** A plan whose every field differs from planValue's defaults, so a column mixed up shows. */
function plan(productId: string, over: Partial<Plan> = {}): Plan {
  return planValue(productId, SEED_TIME, {
    name: "Pro",
    licenseType: "subscription",
    trialDays: 7,
    graceDays: 2,
    maxActivations: null,
    maxSeats: 10,
    floating: true,
    floatingTimeout: 15,
    supportDays: 30,
    supportRenewalPriceId: "price_1",
    purchasePriceId: "price_buy",
    purchaseTrialDays: 7,
    portalOfflineActivation: false,
    quotaPeriod: "daily",
    ...over,
  });
}

function feature(planId: string, name: string, over: Partial<PlanFeature> = {}): PlanFeature {
  return { id: crypto.randomUUID(), planId, name, valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null, stripeMeter: null, createdAt: SEED_TIME, ...over };
}

const boom = () => {
  throw new Error("refused");
};

forEachEngine("PlanRepo", (engine, open) => {
  let o: Opened;
  let repo: PlanRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).plans;
  };
  afterEach(() => o?.close());

  test("a plan write outside a unit of work is refused before it writes anything (a row and the catalog bump commit together or not at all)", async () => {
    await setup();
    const product = await seedProduct(o);
    const p = planValue(product.id, AT);
    const refused = await rejection(repo.create(p, []));
    expect(refused.message).toContain("runs only in a unit of work");
    expect(await repo.findById(p.id)).toBeNull();
    await unitOf(o)((r) => r.plans.create(p, []));
    for (const write of [() => repo.update(p.id, { name: "x" }, AT), () => repo.delete(p.id), () => repo.deleteFeature(p.id, "a")]) {
      expect((await rejection(write())).message).toContain("runs only in a unit of work");
    }
    expect((await repo.findById(p.id))!.name).toBe(p.name);
  });

  test("create stores the plan and its features; features sort by name in byte order; the repository audits nothing", async () => {
    await setup();
    const product = await seedProduct(o);
    const p = plan(product.id);
    const fs = ["b", "B", "a_x", "a-x"].map((n) => feature(p.id, n));
    fs[0] = { ...fs[0]!, valueType: "quota", value: "", quotaLimit: 5_000_000_000, quotaPeriod: "hourly" };
    expect(await unitOf(o)((r) => r.plans.create(p, fs))).toEqual(p);
    expect(await repo.findById(p.id)).toEqual(p);
    expect((await repo.features(p.id)).map((f) => f.name)).toEqual(["B", "a-x", "a_x", "b"]);
    expect((await repo.features(p.id)).find((f) => f.name === "b")).toEqual(fs[0]!);
    expect(await repo.feature(p.id, "b")).toEqual(fs[0]!);
    expect(await repo.feature(p.id, "nope")).toBeNull();
    expect(await repo.features("nope")).toEqual([]);
    expect(await repo.findById("nope")).toBeNull();
    expect(await auditActions(o)).toEqual([]);
  });

  test("create refuses duplicate feature names and unknown products with CONFLICT, writing nothing", async () => {
    await setup();
    const product = await seedProduct(o);
    const p = plan(product.id);
    const dup = await rejection(unitOf(o)((r) => r.plans.create(p, [feature(p.id, "x"), feature(p.id, "x")])));
    expect(dup).toEqual({ code: "CONFLICT", message: "Feature names must be unique within a plan." });
    const orphan = plan("no-such-product");
    const fk = await rejection(unitOf(o)((r) => r.plans.create(orphan, [])));
    expect(fk).toEqual({ code: "CONFLICT", message: "Unknown product." });
    expect(await repo.list({})).toEqual([]);
    expect(await repo.features(p.id)).toEqual([]);
  });

  test("list orders by creation time then id in byte order, and filters by product", async () => {
    await setup();
    const a = await seedProduct(o);
    const b = await seedProduct(o);
    for (const id of ["aa", "Zed", "a-b"]) await seedPlan(o, a.id, { id });
    await seedPlan(o, b.id, { id: "0", createdAt: new Date(SEED_TIME.getTime() + 1) });
    expect((await repo.list({})).map((p) => p.id)).toEqual(["Zed", "a-b", "aa", "0"]);
    expect((await repo.list({ productId: b.id })).map((p) => p.id)).toEqual(["0"]);
    expect(await repo.list({ productId: "nope" })).toEqual([]);
  });

  test("lock reads the plan (null for unknown); update returns it as it is now; a unit that throws after it changes nothing", async () => {
    await setup();
    const product = await seedProduct(o);
    const { plan: p } = await seedPlan(o, product.id);
    const updated = await unitOf(o)(async (r) => {
      expect(await r.plans.lock(p.id)).toEqual(p);
      expect(await r.plans.lock("nope")).toBeNull();
      return r.plans.update(p.id, { name: "Gold", maxActivations: null, floating: true }, AT);
    });
    const expected = { ...p, name: "Gold", maxActivations: null, floating: true, updatedAt: AT };
    expect(updated).toEqual(expected);
    const thrown = unitOf(o)(async (r) => {
      await r.plans.update(p.id, { name: "Lost" }, AT);
      await r.outbox.writeEffects(audited("plan.update"));
      return boom();
    });
    expect(await rejection(thrown)).toEqual({ code: "(no code)", message: "refused" });
    expect(await repo.findById(p.id)).toEqual(expected);
    expect(await auditActions(o)).toEqual([]);
  });

  test("delete cascades features and returns the plan as it was; null for unknown; CONFLICT while licenses use it", async () => {
    await setup();
    const product = await seedProduct(o);
    const { plan: gone } = await seedPlan(o, product.id, {}, [{ name: "f", valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null }]);
    const { plan: used } = await seedPlan(o, product.id);
    await seedLicense(o, product.id, used.id);
    expect(await rejection(unitOf(o)(async (r) => (await r.plans.delete(gone.id), boom())))).toEqual({ code: "(no code)", message: "refused" });
    expect(await repo.findById(gone.id)).toEqual(gone);
    expect(await unitOf(o)((r) => r.plans.delete(gone.id))).toEqual(gone);
    expect(await repo.findById(gone.id)).toBeNull();
    expect(await repo.features(gone.id)).toEqual([]);
    expect(await unitOf(o)((r) => r.plans.delete(gone.id))).toBeNull();
    const err = await rejection(unitOf(o)((r) => r.plans.delete(used.id)));
    expect(err).toEqual({ code: "CONFLICT", message: "Licenses still use this plan." });
    expect(await repo.findById(used.id)).toEqual(used);
  });

  test("upsertFeature inserts, then replaces in place (id and createdAt kept); deleteFeature returns what it removed", async () => {
    await setup();
    const product = await seedProduct(o);
    const { plan: p } = await seedPlan(o, product.id);
    const first = feature(p.id, "seats", { valueType: "int", value: "5" });
    expect(await unitOf(o)((r) => r.plans.upsertFeature(first))).toEqual(first);
    const second = feature(p.id, "seats", { valueType: "quota", value: "", quotaLimit: 9, quotaPeriod: "yearly", createdAt: AT });
    const replaced = { ...first, valueType: "quota" as const, value: "", quotaLimit: 9, quotaPeriod: "yearly" as const };
    expect(await unitOf(o)((r) => r.plans.upsertFeature(second))).toEqual(replaced);
    expect(await rejection(unitOf(o)(async (r) => (await r.plans.upsertFeature(feature(p.id, "new")), boom())))).toEqual({ code: "(no code)", message: "refused" });
    expect(await repo.features(p.id)).toEqual([replaced]);
    expect(await rejection(unitOf(o)(async (r) => (await r.plans.deleteFeature(p.id, "seats"), boom())))).toEqual({ code: "(no code)", message: "refused" });
    expect(await repo.features(p.id)).toEqual([replaced]);
    expect(await unitOf(o)((r) => r.plans.deleteFeature(p.id, "seats"))).toEqual(replaced);
    expect(await unitOf(o)((r) => r.plans.deleteFeature(p.id, "seats"))).toBeNull();
    expect(await unitOf(o)((r) => r.plans.deleteFeature("nope", "seats"))).toBeNull();
    expect(await repo.features(p.id)).toEqual([]);
  });

  test("every write bumps the catalog generation in its unit of work; a unit that throws takes the bump back; no write, no bump", async () => {
    await setup();
    const product = await seedProduct(o);
    const p = plan(product.id);
    const before = await catalogGeneration(o);
    await unitOf(o)((r) => r.plans.create(p, [feature(p.id, "a")]));
    await unitOf(o)((r) => r.plans.update(p.id, { name: "Gold" }, AT));
    await unitOf(o)((r) => r.plans.upsertFeature(feature(p.id, "b")));
    await unitOf(o)((r) => r.plans.deleteFeature(p.id, "a"));
    expect(await catalogGeneration(o)).toBe(before + 4);
    for (const write of [
      (r: Repos) => r.plans.update(p.id, { name: "Lost" }, AT),
      (r: Repos) => r.plans.upsertFeature(feature(p.id, "c")),
      (r: Repos) => r.plans.deleteFeature(p.id, "b"),
      (r: Repos) => r.plans.delete(p.id),
    ]) {
      expect(await rejection(unitOf(o)(async (r) => (await write(r), boom())))).toEqual({ code: "(no code)", message: "refused" });
    }
    expect(await catalogGeneration(o)).toBe(before + 4);
    expect(await unitOf(o)((r) => r.plans.deleteFeature(p.id, "nope"))).toBeNull();
    expect(await unitOf(o)((r) => r.plans.delete("nope"))).toBeNull();
    expect(await catalogGeneration(o)).toBe(before + 4);
    await unitOf(o)((r) => r.plans.delete(p.id));
    expect(await catalogGeneration(o)).toBe(before + 5);
  });

  if (engine === "postgres") {
    const threeNodes = (body: (units: Unit[]) => Promise<unknown>) => withPgUnits(o, 3, body);

    test("concurrent updates (the verb's unit: lock, update, audit) from three nodes: each before is a different predecessor", async () => {
      await setup();
      const product = await seedProduct(o);
      const { plan: p } = await seedPlan(o, product.id, { name: "start" });
      const befores: string[] = [];
      await threeNodes((units) =>
        Promise.all(
          Array.from({ length: 18 }, (_, i) =>
            units[i % 3]!(async (r) => {
              befores.push((await r.plans.lock(p.id))!.name);
              await r.plans.update(p.id, { name: `n${i}` }, AT);
              await r.outbox.writeEffects(audited("plan.update"));
            }),
          ),
        ),
      );
      const final = (await repo.findById(p.id))!.name;
      // A chain: start -> … -> final, every name replaced exactly once.
      expect(new Set(befores).size).toBe(18);
      expect(befores).toContain("start");
      expect(befores).not.toContain(final);
    });

    test("concurrent upserts of one new feature from three nodes (the plan held first): exactly one sees no previous row", async () => {
      await setup();
      const product = await seedProduct(o);
      const { plan: p } = await seedPlan(o, product.id);
      const befores: (string | null)[] = [];
      await threeNodes((units) =>
        Promise.all(
          Array.from({ length: 18 }, (_, i) =>
            units[i % 3]!(async (r) => {
              await r.plans.lock(p.id);
              befores.push((await r.plans.feature(p.id, "seats"))?.value ?? null);
              await r.plans.upsertFeature(feature(p.id, "seats", { valueType: "int", value: String(i) }));
              await r.outbox.writeEffects(audited("plan.feature"));
            }),
          ),
        ),
      );
      const [final] = await repo.features(p.id);
      expect(befores.filter((b) => b === null).length).toBe(1);
      expect(new Set(befores).size).toBe(18);
      expect(befores).not.toContain(final!.value);
      expect((await auditActions(o)).length).toBe(18);
    });
  }
});
