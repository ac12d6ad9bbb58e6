// PlanRepo on every engine: plans with their features, audit callbacks inside the transaction (a
// throw rolls everything back), constraint conflicts, byte-order sorting, and on PostgreSQL the
// row locks that make each audit's "before" the state its change replaced.
import { afterEach, expect, test } from "bun:test";
import type { Plan, PlanFeature, PlanRepo } from "../../src/modules/plans/repo";
import { forEachEngine, type Opened } from "./harness";
import { SEED_TIME, seedLicense, seedPlan, seedProduct } from "./seed";
import { repoFor } from "./repos";
import { AT, auditActions, audited, rejection } from "./rows";
import { withNodes } from "./nodes";
import { planValue } from "../support/plan-value";

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

  test("create stores the plan, its features and one audit row; features sort by name in byte order", async () => {
    await setup();
    const product = await seedProduct(o);
    const p = plan(product.id);
    const fs = ["b", "B", "a_x", "a-x"].map((n) => feature(p.id, n));
    fs[0] = { ...fs[0]!, valueType: "quota", value: "", quotaLimit: 5_000_000_000, quotaPeriod: "hourly" };
    expect(await repo.create(p, fs, audited("plan.create"))).toEqual(p);
    expect(await repo.findById(p.id)).toEqual(p);
    expect((await repo.features(p.id)).map((f) => f.name)).toEqual(["B", "a-x", "a_x", "b"]);
    expect((await repo.features(p.id)).find((f) => f.name === "b")).toEqual(fs[0]!);
    expect(await repo.features("nope")).toEqual([]);
    expect(await repo.findById("nope")).toBeNull();
    expect(await auditActions(o)).toEqual(["plan.create"]);
  });

  test("create refuses duplicate feature names and unknown products with CONFLICT, writing nothing", async () => {
    await setup();
    const product = await seedProduct(o);
    const p = plan(product.id);
    const dup = await rejection(repo.create(p, [feature(p.id, "x"), feature(p.id, "x")], audited("plan.create")));
    expect(dup).toEqual({ code: "CONFLICT", message: "Feature names must be unique within a plan." });
    const orphan = plan("no-such-product");
    const fk = await rejection(repo.create(orphan, [], audited("plan.create")));
    expect(fk).toEqual({ code: "CONFLICT", message: "Unknown product." });
    expect(await repo.list({})).toEqual([]);
    expect(await repo.features(p.id)).toEqual([]);
    expect(await auditActions(o)).toEqual([]);
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

  test("update patches and audits with before/after; null for unknown; a throwing audit changes nothing", async () => {
    await setup();
    const product = await seedProduct(o);
    const { plan: p } = await seedPlan(o, product.id);
    const seen: [Plan, Plan][] = [];
    const updated = await repo.update(p.id, { name: "Gold", maxActivations: null, floating: true }, AT, (before, after) => {
      seen.push([before, after]);
      return audited("plan.update");
    });
    const expected = { ...p, name: "Gold", maxActivations: null, floating: true, updatedAt: AT };
    expect(updated).toEqual(expected);
    expect(seen).toEqual([[p, expected]]);
    expect(await repo.update("nope", { name: "x" }, AT, () => audited("plan.update"))).toBeNull();
    expect(await rejection(repo.update(p.id, { name: "Lost" }, AT, boom))).toEqual({ code: "(no code)", message: "refused" });
    expect(await repo.findById(p.id)).toEqual(expected);
    expect(await auditActions(o)).toEqual(["plan.update"]);
  });

  test("delete cascades features and audits; false for unknown; CONFLICT while licenses use it; a throwing audit keeps it", async () => {
    await setup();
    const product = await seedProduct(o);
    const { plan: gone } = await seedPlan(o, product.id, {}, [{ name: "f", valueType: "bool", value: "true", quotaLimit: null, quotaPeriod: null }]);
    const { plan: used } = await seedPlan(o, product.id);
    await seedLicense(o, product.id, used.id);
    expect(await rejection(repo.delete(gone.id, boom))).toEqual({ code: "(no code)", message: "refused" });
    expect(await repo.findById(gone.id)).toEqual(gone);
    let before: Plan | null = null;
    expect(
      await repo.delete(gone.id, (b) => {
        before = b;
        return audited("plan.delete");
      }),
    ).toBe(true);
    expect(before!).toEqual(gone);
    expect(await repo.findById(gone.id)).toBeNull();
    expect(await repo.features(gone.id)).toEqual([]);
    expect(await repo.delete(gone.id, () => audited("plan.delete"))).toBe(false);
    const err = await rejection(repo.delete(used.id, () => audited("plan.delete")));
    expect(err).toEqual({ code: "CONFLICT", message: "Licenses still use this plan." });
    expect(await repo.findById(used.id)).toEqual(used);
    expect(await auditActions(o)).toEqual(["plan.delete"]);
  });

  test("upsertFeature inserts, then replaces in place (id and createdAt kept); audit sees the replaced row", async () => {
    await setup();
    const product = await seedProduct(o);
    const { plan: p } = await seedPlan(o, product.id);
    const seen: [PlanFeature | null, PlanFeature][] = [];
    const audit = (b: PlanFeature | null, a: PlanFeature) => {
      seen.push([b, a]);
      return audited("plan.feature");
    };
    const first = feature(p.id, "seats", { valueType: "int", value: "5" });
    expect(await repo.upsertFeature(first, audit)).toEqual(first);
    const second = feature(p.id, "seats", { valueType: "quota", value: "", quotaLimit: 9, quotaPeriod: "yearly", createdAt: AT });
    const replaced = { ...first, valueType: "quota" as const, value: "", quotaLimit: 9, quotaPeriod: "yearly" as const };
    expect(await repo.upsertFeature(second, audit)).toEqual(replaced);
    expect(seen).toEqual([
      [null, first],
      [first, replaced],
    ]);
    expect(await rejection(repo.upsertFeature(feature(p.id, "seats", { value: "7" }), boom))).toEqual({ code: "(no code)", message: "refused" });
    expect(await rejection(repo.upsertFeature(feature(p.id, "new"), boom))).toEqual({ code: "(no code)", message: "refused" });
    expect(await repo.features(p.id)).toEqual([replaced]);
    expect(await auditActions(o)).toEqual(["plan.feature", "plan.feature"]);
  });

  test("deleteFeature removes and audits; false for an unknown name; a throwing audit keeps it", async () => {
    await setup();
    const product = await seedProduct(o);
    const { plan: p, features } = await seedPlan(o, product.id, {}, [{ name: "f", valueType: "flag", value: "on", quotaLimit: null, quotaPeriod: null }]);
    expect(await rejection(repo.deleteFeature(p.id, "f", boom))).toEqual({ code: "(no code)", message: "refused" });
    expect(await repo.features(p.id)).toEqual(features);
    let before: PlanFeature | null = null;
    expect(
      await repo.deleteFeature(p.id, "f", (b) => {
        before = b;
        return audited("plan.feature_delete");
      }),
    ).toBe(true);
    expect(before!).toEqual(features[0]!);
    expect(await repo.features(p.id)).toEqual([]);
    expect(await repo.deleteFeature(p.id, "f", () => audited("plan.feature_delete"))).toBe(false);
    expect(await repo.deleteFeature("nope", "f", () => audited("plan.feature_delete"))).toBe(false);
    expect(await auditActions(o)).toEqual(["plan.feature_delete"]);
  });

  if (engine === "postgres") {
    test("concurrent updates from three nodes: each audit's before is a different predecessor", async () => {
      await setup();
      const product = await seedProduct(o);
      const { plan: p } = await seedPlan(o, product.id, { name: "start" });
      const befores: string[] = [];
      await withNodes(o, 3, (nodes) =>
        Promise.all(
          Array.from({ length: 18 }, (_, i) =>
            nodes[i % 3]!.plans.update(p.id, { name: `n${i}` }, AT, (b) => {
              befores.push(b.name);
              return audited("plan.update");
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

    test("concurrent upserts of one new feature from three nodes: exactly one sees no previous row", async () => {
      await setup();
      const product = await seedProduct(o);
      const { plan: p } = await seedPlan(o, product.id);
      const befores: (string | null)[] = [];
      await withNodes(o, 3, (nodes) =>
        Promise.all(
          Array.from({ length: 18 }, (_, i) =>
            nodes[i % 3]!.plans.upsertFeature(feature(p.id, "seats", { valueType: "int", value: String(i) }), (b) => {
              befores.push(b ? b.value : null);
              return audited("plan.feature");
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
