// Seeding N licenses (one activation each) for the scale bench (bench/scale.ts), through Keyward's own
// code: the database is created and migrated by createDeps (the server's container), products and plans
// by their services, every license row by buildLicense (key, lookup hash, sealed copy) and its audit row
// by issueEffects → auditRow, exactly as issuing one does. Only the writing is batched: thousands of
// rows per transaction, multi-row INSERTs, instead of one transaction per license (a million
// admin-API calls would take hours on 2 cores). Outbox events (license.created) are not written: a
// running installation has delivered them long ago, and a million pending rows would keep the
// delivery worker busy during the measurements.
//
// Exported for tests that want a smaller realistic dataset: `seedScale({ env, licenses: 5000 })`.
import { randomBytes } from "node:crypto";
import { loadConfig } from "../../src/config";
import { createDeps, sqliteHandleOf } from "../../src/container";
import type { Deps } from "../../src/deps";
import { systemClock, DAY } from "../../src/shared/clock";
import { createLogger } from "../../src/shared/logger";
import { SYSTEM_ACTOR } from "../../src/shared/actor";
import { newId } from "../../src/shared/ids";
import { createProduct } from "../../src/modules/products/service";
import { createPlan } from "../../src/modules/plans/service";
import { buildLicense, issueEffects } from "../../src/modules/licenses/service";
import type { License, LicenseStatus } from "../../src/modules/licenses/repo";
import type { Activation } from "../../src/modules/activations/repo";
import { auditRow } from "../../src/modules/outbox/effects";
import * as sqliteSchema from "../../src/db/schema";
import * as pgSchema from "../../src/db/schema-pg";

export interface SeedOptions {
  /** The server's environment (DATA_DIR, RELEASE_KEY_ENCRYPTION_KEY, DATABASE_URL for PostgreSQL). */
  env: Record<string, string>;
  licenses: number;
  /** Licenses per transaction. */
  batch?: number;
  /** How many verifiable (usable, activated, not due) licenses to hand back for the verify load. */
  verifyPool?: number;
  /** How many sample rows to keep for the admin list shapes. */
  samples?: number;
  /** The instant the dataset is built around ("now" for the lifecycle pass); default the real now. */
  now?: Date;
  /** Deterministic choices (not keys: those are random as in production). */
  seed?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface SeedSample {
  id: string;
  key: string;
  keyHint: string;
  email: string;
  externalCustomerId: string | null;
  status: LicenseStatus;
  productId: string;
  /** created_at in ms (with id, a list cursor). */
  createdAt: number;
}

export interface SeedResult {
  licenses: number;
  products: { id: string; slug: string; planIds: string[] }[];
  /** Keys and identifiers of usable, activated licenses that stay usable through the bench. */
  verifyPool: { key: string; identifier: string }[];
  /** A spread of licenses (every status) for the list/search shapes. */
  samples: SeedSample[];
  /** Licenses the lifecycle pass has something to do for at `now` (expiries, dunning). */
  due: number;
  statuses: Record<string, number>;
  now: string;
  seconds: number;
}

/** A small deterministic PRNG (mulberry32): the same N and seed give the same distribution. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PRODUCTS = [
  { slug: "studio", plans: [{ name: "Studio Pro", type: "perpetual" }, { name: "Studio Team", type: "subscription" }, { name: "Studio Trial", type: "trial" }] },
  { slug: "render", plans: [{ name: "Render Node", type: "subscription" }, { name: "Render Trial", type: "trial" }] },
  { slug: "sync", plans: [{ name: "Sync Personal", type: "subscription" }, { name: "Sync Business", type: "subscription" }] },
  { slug: "cli", plans: [{ name: "CLI", type: "perpetual" }] },
] as const;

/** Email domains: a few hundred, skewed (a few large customers, a long tail). */
export const DOMAIN_COUNT = 300;
export const emailDomain = (d: number) => (d === 0 ? "gmail.com" : d === 1 ? "outlook.com" : `customer${d}.example`);

/**
 * What a license looks like at index i. Shares (of all licenses): active 80 % (of which 7 points past
 * valid_until + grace: due to expire), trialing 6 % (1 point past its end: due), expired 7 %,
 * past_due 2 % (episode 0–5 days old: a dunning notice due), suspended 5 %. valid_until and
 * support_until lie within ±2 years of `now` and, for licenses not due, outside every reminder and
 * notice window (more than 31 days away), so about 10 % of licenses are due for the lifecycle pass
 * and a second pass right after finds nothing.
 */
function shape(rand: () => number, now: number) {
  const r = rand();
  const farFuture = () => now + (32 + rand() * 700) * DAY;
  const farPast = () => now - (32 + rand() * 700) * DAY;
  // support_until: a third unlimited, the rest well away from every notice window.
  const support = () => (rand() < 0.33 ? null : new Date(rand() < 0.5 ? farPast() : farFuture()));
  let status: LicenseStatus;
  let validUntil: number | null;
  let due = false;
  let pastDueSince: number | null = null;
  let priorStatus: LicenseStatus | null = null;
  if (r < 0.73) {
    status = "active";
    validUntil = rand() < 0.4 ? null : farFuture();
  } else if (r < 0.8) {
    status = "active";
    validUntil = farPast(); // past valid_until + grace (grace ≤ 14 days): expires
    due = true;
  } else if (r < 0.85) {
    status = "trialing";
    validUntil = now + (8 + rand() * 20) * DAY;
  } else if (r < 0.86) {
    status = "trialing";
    validUntil = now - (1 + rand() * 60) * DAY; // trial ended: expires
    due = true;
  } else if (r < 0.93) {
    status = "expired";
    validUntil = farPast();
  } else if (r < 0.95) {
    status = "past_due";
    validUntil = farFuture();
    pastDueSince = now - rand() * 5 * DAY; // dunning day 1 due
    due = true;
  } else {
    status = "suspended";
    priorStatus = "active";
    validUntil = rand() < 0.5 ? null : farFuture();
  }
  return { status, priorStatus, validUntil: validUntil === null ? null : new Date(validUntil), supportUntil: support(), pastDueSince, due };
}

/** Seeds `licenses` licenses into the database the env names (SQLite under DATA_DIR, or DATABASE_URL). */
export async function seedScale(o: SeedOptions): Promise<SeedResult> {
  const t0 = performance.now();
  const config = loadConfig(o.env);
  const logger = createLogger("warn", (l) => process.stderr.write(l + "\n"));
  const deps: Deps = await createDeps(config, systemClock, logger);
  const now = o.now ?? new Date();
  const nowMs = now.getTime();
  const rand = prng(o.seed ?? 26);
  const batch = o.batch ?? 5000;
  const poolTarget = o.verifyPool ?? 2000;
  const sampleTarget = o.samples ?? 200;
  try {
    const products: SeedResult["products"] = [];
    const plans: { id: string; productId: string; licenseType: string; trialDays: number }[] = [];
    const suffix = randomBytes(3).toString("hex");
    for (const p of PRODUCTS) {
      const product = await createProduct(deps, SYSTEM_ACTOR, { name: `Scale ${p.slug}`, slug: `${p.slug}-${suffix}` });
      const planIds: string[] = [];
      for (const pl of p.plans) {
        const { plan } = await createPlan(deps, SYSTEM_ACTOR, {
          productId: product.id,
          name: pl.name,
          licenseType: pl.type as never,
          ...(pl.type === "trial" ? { trialDays: 30 } : {}),
          maxActivations: 5,
        });
        planIds.push(plan.id);
        plans.push({ id: plan.id, productId: product.id, licenseType: pl.type, trialDays: 30 });
      }
      products.push({ id: product.id, slug: product.slug, planIds });
    }
    const trialPlans = plans.filter((p) => p.licenseType === "trial");
    const otherPlans = plans.filter((p) => p.licenseType !== "trial");

    const sqlite = sqliteHandleOf(deps.db);
    let pg: Awaited<ReturnType<typeof openPg>> | null = null;
    if (!sqlite) pg = await openPg(config.databaseUrl!);
    const write = async (ls: License[], acts: Activation[], audits: ReturnType<typeof auditRow>[]) => {
      if (sqlite) {
        const { db } = sqlite;
        const s = sqliteSchema;
        // SQLite binds at most 32,766 parameters per statement: 500 rows of ≤ 16 columns.
        sqlite.sqlite
          .transaction(() => {
            for (let i = 0; i < ls.length; i += 500) db.insert(s.licenses).values(ls.slice(i, i + 500)).run();
            for (let i = 0; i < acts.length; i += 1000) db.insert(s.activations).values(acts.slice(i, i + 1000)).run();
            for (let i = 0; i < audits.length; i += 1000) db.insert(s.auditLog).values(audits.slice(i, i + 1000)).run();
          })
          .immediate();
      } else {
        const s = pgSchema;
        await pg!.db.transaction(async (tx) => {
          for (let i = 0; i < ls.length; i += 2000) await tx.insert(s.licenses).values(ls.slice(i, i + 2000));
          for (let i = 0; i < acts.length; i += 4000) await tx.insert(s.activations).values(acts.slice(i, i + 4000));
          for (let i = 0; i < audits.length; i += 4000) await tx.insert(s.auditLog).values(audits.slice(i, i + 4000));
        });
      }
    };

    const verifyPool: SeedResult["verifyPool"] = [];
    const samples: SeedSample[] = [];
    const statuses: Record<string, number> = {};
    let due = 0;
    // Pool and sample members are spread evenly over the whole dataset (not the newest rows only).
    const poolEvery = Math.max(1, Math.floor(o.licenses / (poolTarget * 1.4)));
    const sampleEvery = Math.max(1, Math.floor(o.licenses / sampleTarget));
    const span = 3 * 365 * DAY; // created over the last three years, oldest first
    for (let start = 0; start < o.licenses; start += batch) {
      const end = Math.min(o.licenses, start + batch);
      const ls: License[] = [];
      const acts: Activation[] = [];
      const audits: ReturnType<typeof auditRow>[] = [];
      for (let i = start; i < end; i++) {
        const sh = shape(rand, nowMs);
        const trial = sh.status === "trialing";
        const plan = trial ? trialPlans[i % trialPlans.length]! : otherPlans[i % otherPlans.length]!;
        const createdAt = new Date(nowMs - span + Math.floor((span * i) / o.licenses));
        const d = Math.floor(Math.pow(rand(), 3) * DOMAIN_COUNT);
        const email = `user${i}@${emailDomain(d)}`;
        const { license, key } = buildLicense(
          deps,
          { id: plan.id, licenseType: plan.licenseType as never, trialDays: plan.trialDays },
          {
            productId: plan.productId,
            email,
            status: sh.status,
            validUntil: sh.validUntil,
            supportUntil: sh.supportUntil,
            externalCustomerId: rand() < 0.7 ? `cus_${(i * 2654435761 >>> 0).toString(36)}${i.toString(36)}` : null,
          },
          createdAt,
        );
        // Fields issuing does not set (a license that lived): the past_due episode, the suspended one's prior state.
        license.priorStatus = sh.priorStatus;
        license.pastDueSince = sh.pastDueSince === null ? null : new Date(sh.pastDueSince);
        ls.push(license);
        statuses[sh.status] = (statuses[sh.status] ?? 0) + 1;
        if (sh.due) due++;
        const identifier = `device-${i}`;
        const seenAt = new Date(Math.max(createdAt.getTime(), nowMs - rand() * 30 * DAY));
        acts.push({ id: newId(), licenseId: license.id, identifier, identifierType: "device", label: null, createdAt, lastSeenAt: seenAt });
        const effects = issueEffects(SYSTEM_ACTOR, license, [], createdAt);
        audits.push(auditRow(effects.audit!));
        const usable = !sh.due && (sh.status === "active" || sh.status === "trialing");
        if (usable && i % poolEvery === 0 && verifyPool.length < poolTarget) verifyPool.push({ key, identifier });
        if (i % sampleEvery === 0 && samples.length < sampleTarget) {
          samples.push({ id: license.id, key, keyHint: license.keyHint, email, externalCustomerId: license.externalCustomerId, status: sh.status, productId: plan.productId, createdAt: createdAt.getTime() });
        }
      }
      await write(ls, acts, audits);
      o.onProgress?.(end, o.licenses);
    }
    if (sqlite) sqlite.sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    // PostgreSQL's autovacuum would analyze the new tables within a minute of such a load; SQLite
    // has no statistics unless someone runs ANALYZE, and Keyward does not: none here either.
    if (pg) {
      await pg.sql`ANALYZE`;
      await pg.close();
    }
    return { licenses: o.licenses, products, verifyPool, samples, due, statuses, now: now.toISOString(), seconds: (performance.now() - t0) / 1000 };
  } finally {
    await deps.db.close();
  }
}

async function openPg(url: string) {
  const { openPostgres } = await import("../../src/db/pg");
  return openPostgres(url, { max: 1 });
}
