// Rows for contract suites, written straight into either engine's tables (the repositories under
// test are not used to build their own fixtures).
import * as sqliteSchema from "../../src/db/schema";
import * as pgSchema from "../../src/db/schema-pg";
import { newId } from "../../src/shared/ids";
import type { Opened } from "./harness";
import type { Plan, PlanFeature } from "../../src/modules/plans/repo";
import type { Product } from "../../src/modules/products/repo";
import type { License } from "../../src/modules/licenses/repo";
import { planValue } from "../support/plan-value";

type TableName = "products" | "plans" | "planFeatures" | "licenses" | "addons" | "licenseAddons" | "activations" | "floatingSessions" | "usageCounters" | "outbox" | "webhookEndpoints" | "webhookDeliveries";

export async function insertRows(o: Opened, table: TableName, rows: Record<string, unknown>[]): Promise<void> {
  if (rows.length === 0) return;
  if (o.sqlite) o.sqlite.db.insert(sqliteSchema[table] as any).values(rows as any).run();
  else await o.pg!.db.insert(pgSchema[table] as any).values(rows as any);
}

const at = new Date("2026-11-21T08:00:00.000Z");
let seq = 0;

export async function seedProduct(o: Opened, over: Partial<Product> = {}): Promise<Product> {
  seq += 1;
  const product: Product = {
    id: newId(),
    name: `Product ${seq}`,
    slug: `product-${seq}-${newId().slice(-6).toLowerCase()}`,
    distribution: "open",
    minimumSupportedVersion: null,
    minimumSupportedMessage: null,
    releaseGeneration: 0,
    createdAt: at,
    updatedAt: at,
    ...over,
  } as Product;
  await insertRows(o, "products", [product as unknown as Record<string, unknown>]);
  return product;
}

export async function seedPlan(
  o: Opened,
  productId: string,
  over: Partial<Plan> = {},
  features: (Omit<PlanFeature, "id" | "planId" | "createdAt" | "stripeMeter"> & { stripeMeter?: string | null })[] = [],
): Promise<{ plan: Plan; features: PlanFeature[] }> {
  const plan = planValue(productId, at, over);
  await insertRows(o, "plans", [plan as unknown as Record<string, unknown>]);
  const rows: PlanFeature[] = features.map((f) => ({ stripeMeter: null, ...f, id: newId(), planId: plan.id, createdAt: at }));
  await insertRows(o, "planFeatures", rows as unknown as Record<string, unknown>[]);
  return { plan, features: rows };
}

export async function seedLicense(o: Opened, productId: string, planId: string, over: Partial<License> = {}): Promise<License> {
  const id = newId();
  const license: License = {
    id,
    productId,
    planId,
    keyHash: `hash-${id}`,
    keyEncrypted: `sealed-${id}`,
    keyHint: "ABCD",
    email: `user${++seq}@example.com`,
    status: "active",
    priorStatus: null,
    validUntil: null,
    supportUntil: null,
    pastDueSince: null,
    externalCustomerId: null,
    externalWorkspaceId: null,
    createdAt: at,
    updatedAt: at,
    ...over,
  };
  await insertRows(o, "licenses", [license as unknown as Record<string, unknown>]);
  return license;
}

/** A product, a plan (with features) and an active license. */
export async function seedCatalog(o: Opened, planOver: Partial<Plan> = {}, features: Parameters<typeof seedPlan>[3] = []) {
  const product = await seedProduct(o);
  const { plan, features: planFeatures } = await seedPlan(o, product.id, planOver, features);
  const license = await seedLicense(o, product.id, plan.id);
  return { product, plan, planFeatures, license };
}

export const SEED_TIME = at;
