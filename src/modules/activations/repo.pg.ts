import { and, asc, count, eq, getTableColumns, sql } from "drizzle-orm";
import type { PgDb, PgExecutor, PgHandle } from "../../db/pg";
import { autocommitWrite } from "../../db/serializable.pg";
import { activations, licenses, plans } from "../../db/schema-pg";
import { writeEffectsPg } from "../outbox/write.pg";
import { hasEffects, type Effects } from "../outbox/effects";
import { licenseColumns, planColumns, rawPlan, readLicenseAccess, type RawPlanRow } from "../license-api/repo.pg";
import { msDate, rawLicense, type RawLicenseRow } from "../license-api/raw-rows";
import { lookedUpActivation, type RawLookupActivation } from "./raw-rows";
import { rawGrants, type RawGrant } from "../entitlements/repo.pg";
import type { LicenseAccess } from "../license-api/repo";
import type { Recorder } from "../idempotency/repo";
import { storeOutcomePg } from "../idempotency/repo.pg";
import type { FeatureGrant } from "../entitlements/repo";
import { newId } from "../../shared/ids";
import { CATALOG_GENERATION, cachedPlan, createCatalogCache, type CachedPlan } from "./catalog-cache";
import type { ActivatedOutcome, ActivateOutcome, Activation, ActivationLookup, ActivationPage, ActivationRepo, NewActivation, VerifyLookup } from "./repo";
import { decideOnRead, reactivated } from "./domain";
import { afterCursorAsc } from "../../db/cursor";

/** Lock-free rounds of activate() before it falls back to the license row lock (a license changing under it each time). */
const LOCK_FREE_ATTEMPTS = 3;

interface VerifyRow extends RawLicenseRow {
  activation_id: string;
  last_seen_at: number | null;
  /** The catalog generation; null before the first plan write. */
  catalog: number | null;
  has_addons: boolean;
}

interface LookupRow extends RawLicenseRow, RawLookupActivation {
  version: string;
  catalog: number | null;
  has_addons: boolean;
  activation_count: number;
}

interface PlanRow extends RawPlanRow {
  /** [[name, value_type, value, quota_limit, quota_period], …] in name order. */
  features: RawGrant[];
}

const toGrants = rawGrants;

const ms = msDate;

const licenseOf = rawLicense;

/** A license's activations, oldest first: one range of activations_license_created_idx (exported for the query-plan test). */
export const activationsOfLicenseQueryPg = (db: PgHandle["db"], licenseId: string, page?: ActivationPage) => {
  const id = sql`${activations.id} COLLATE "C"`;
  const q = db
    .select()
    .from(activations)
    .where(and(eq(activations.licenseId, licenseId), page?.cursor ? afterCursorAsc(activations.createdAt, id, page.cursor) : undefined))
    .orderBy(asc(activations.createdAt), id);
  return page ? q.limit(page.limit) : q;
};

export function createActivationRepoPg(handle: PgHandle): ActivationRepo {
  const { db } = handle;
  const client = handle.sql;
  const catalog = createCatalogCache();
  const loadPlan = async (planId: string): Promise<CachedPlan | null> => {
    const [r] = await client<PlanRow[]>`
      SELECT p.name, p.grace_days, p.max_activations, p.floating, p.floating_timeout, p.quota_period,
             (SELECT coalesce(json_agg(json_build_array(f.name, f.value_type, f.value, f.quota_limit, f.quota_period)
                                       ORDER BY f.name COLLATE "C"), '[]'::json)
                FROM plan_features f WHERE f.plan_id = p.id) AS features
        FROM plans p WHERE p.id = ${planId}`;
    if (!r) return null;
    return cachedPlan(rawPlan(planId, r), toGrants("plan", r.features));
  };

  /** Add-on grants of a license in attach order, then add-on id (as EntitlementRepo.grants). */
  const addonGrants = async (licenseId: string): Promise<FeatureGrant[]> => {
    const [r] = await client<{ addons: RawGrant[] | null }[]>`
      SELECT json_agg(json_build_array(ad.feature_name, ad.value_type, ad.value, ad.quota_limit, ad.quota_period)
                      ORDER BY la.created_at, la.addon_id COLLATE "C") AS addons
        FROM license_addons la JOIN addons ad ON ad.id = la.addon_id WHERE la.license_id = ${licenseId}`;
    return toGrants("addon", r?.addons ?? []);
  };

  /** The plan and its grants from the catalog cache under `generation`, loading it on a miss. */
  const planOf = async (generation: number, planId: string): Promise<CachedPlan | null> => {
    const cached = catalog.get(generation, planId);
    if (cached) return cached;
    const loaded = await loadPlan(planId);
    if (loaded) catalog.set(generation, planId, loaded);
    return loaded;
  };

  // The lock-free activate() statements, built once (prepared on the server by postgres.js).
  const lockFreeRead = (() => {
    let q: ReturnType<typeof build> | undefined;
    const build = () =>
      db
        .select({
          license: licenseColumns,
          plan: planColumns,
          version: sql<string>`${licenses}.xmin::text`,
          count: sql<number>`(SELECT count(*) FROM ${activations} c WHERE c.license_id = ${licenses.id})`.mapWith(Number),
          existing: getTableColumns(activations),
        })
        .from(licenses)
        .innerJoin(plans, eq(plans.id, licenses.planId))
        .leftJoin(activations, and(eq(activations.licenseId, licenses.id), eq(activations.identifier, sql.placeholder("identifier"))))
        .where(eq(licenses.id, sql.placeholder("licenseId")))
        .prepare("activate_lock_free_read");
    return () => (q ??= build());
  })();
  /** The re-activation write: only if the label is still the one read and the license row the version checked. */
  const reactivate = (exec: PgExecutor) =>
    (exec as PgDb)
      .update(activations)
      .set({ label: sql`${sql.placeholder("label")}::text`, lastSeenAt: sql`${sql.placeholder("at")}::timestamptz` })
      .where(
        and(
          eq(activations.id, sql.placeholder("id")),
          sql`${activations.label} IS NOT DISTINCT FROM ${sql.placeholder("seenLabel")}::text`,
          sql`EXISTS (SELECT 1 FROM ${licenses} l WHERE l.id = ${sql.placeholder("licenseId")} AND l.xmin = ${sql.placeholder("version")}::text::xid FOR SHARE)`,
        ),
      )
      .returning({ id: activations.id })
      .prepare("activate_reactivate");
  let reactivateOnPool: ReturnType<typeof reactivate> | undefined;

  /** activate() under the license row lock, in one transaction: new slots (and the fallback of the lock-free path). */
  const lockedActivate = async (
    input: NewActivation,
    check: (current: LicenseAccess | null) => void,
    record?: Recorder<ActivatedOutcome>,
    effects?: (outcome: ActivatedOutcome) => Effects,
  ): Promise<ActivateOutcome> =>
    db.transaction(async (tx): Promise<ActivateOutcome> => {
      // Locks the license row: activations of one license (on any node) and a revoke serialise
      // here, so the count below cannot be overtaken and a committed revoke is seen by check().
      const current = await readLicenseAccess(tx, { id: input.licenseId }, { forUpdate: true });
      check(current);
      const lic = current!;
      const [existing] = await tx
        .select()
        .from(activations)
        .where(and(eq(activations.licenseId, input.licenseId), eq(activations.identifier, input.identifier)));
      if (existing) {
        const { activation, changed } = reactivated(existing, input);
        if (changed) await tx.update(activations).set({ label: activation.label, lastSeenAt: activation.lastSeenAt }).where(eq(activations.id, existing.id));
        const outcome: ActivatedOutcome = { kind: "already_activated", activation, access: lic };
        if (effects) await writeEffectsPg(tx, effects(outcome));
        if (record) await storeOutcomePg(tx, record(outcome));
        return outcome;
      }
      const max = lic.plan.maxActivations;
      if (max !== null) {
        const [counted] = await tx.select({ n: count() }).from(activations).where(eq(activations.licenseId, input.licenseId));
        if (counted!.n >= max) return { kind: "limit", max };
      }
      const activation: Activation = {
        id: newId(),
        licenseId: input.licenseId,
        identifier: input.identifier,
        identifierType: input.identifierType,
        label: input.label,
        createdAt: input.at,
        lastSeenAt: input.at,
      };
      await tx.insert(activations).values(activation);
      const outcome: ActivatedOutcome = { kind: "activated", activation, access: lic };
      if (effects) await writeEffectsPg(tx, effects(outcome));
      if (record) await storeOutcomePg(tx, record(outcome));
      return outcome;
    });

  type Decision = ActivateOutcome | "read again" | "lock";
  /**
   * The lock-free decision on a committed read (the caller's lookup or activate's own): refusals
   * write nothing; a re-activation is one conditional statement; a new slot needs the lock.
   */
  const decide = async (
    input: NewActivation,
    current: LicenseAccess | null,
    version: string,
    existing: Activation | null,
    activationCount: number,
    check: (current: LicenseAccess | null) => void,
    record?: Recorder<ActivatedOutcome>,
    effects?: (outcome: ActivatedOutcome) => Effects,
  ): Promise<Decision> => {
    const d = decideOnRead(input, current, existing, activationCount, check, record !== undefined, effects);
    if (d.kind === "answer") return d.outcome;
    if (d.kind === "slot") return "lock";
    // A re-activation with something to write: one statement, conditional on the activation's label
    // being the one read, so the outcome is exactly the one `effects` and `record` see.
    const { outcome, effects: effs } = d;
    const activation = outcome.activation;
    const plain = !record && !(effs && hasEffects(effs));
    const params = {
      id: d.existing.id,
      label: activation.label,
      at: (activation.lastSeenAt ?? input.at).toISOString(),
      seenLabel: d.existing.label,
      licenseId: input.licenseId,
      version,
    };
    const write = async (tx?: PgExecutor) => (await (tx ? reactivate(tx) : (reactivateOnPool ??= reactivate(db))).execute(params)).length === 1;
    if (plain) return (await write()) ? outcome : "read again";
    // Something to store with it: the same conditional write, with the effects and the outcome in
    // one transaction (no license row lock).
    const done = await db.transaction(async (tx) => {
      if (!(await write(tx))) return false;
      if (effs) await writeEffectsPg(tx, effs);
      if (record) await storeOutcomePg(tx, record(outcome));
      return true;
    });
    return done ? outcome : "read again";
  };

  return {
    async activate(input, check, record, effects) {
      // The common calls need no lock (measured under the contention bench: 64 connections on a few
      // licenses, most calls re-activations or limit refusals). The decision is taken on a committed
      // read without a transaction — the caller's lookup (`seen`, which carries the license row
      // version, xmin), else activate's own read of license, version, the identifier's activation and
      // the count:
      // - a refusal (check throws, or no slot left) writes nothing, decided on that read;
      // - a re-activation is ONE statement, conditional on the license row being the version read,
      //   re-checked under a share lock (a revoke committed since, or committing now, makes it match
      //   nothing and the call reads again, sees the revoke and refuses); with effects or an
      //   Idempotency-Key outcome to store, that statement and those writes form one transaction;
      // - only a new slot takes the license row lock, in a transaction where the count cannot be
      //   overtaken (lockedActivate), as does a call whose license keeps changing under it.
      const seen = input.seen;
      if (seen?.version !== undefined && seen.access.license.id === input.licenseId && (seen.existing?.identifier ?? input.identifier) === input.identifier) {
        const d = await decide(input, seen.access, seen.version, seen.existing, seen.count, check, record, effects);
        if (d === "lock") return lockedActivate(input, check, record, effects);
        if (d !== "read again") return d;
      }
      for (let attempt = 0; attempt < LOCK_FREE_ATTEMPTS; attempt++) {
        const [row] = await lockFreeRead().execute({ licenseId: input.licenseId, identifier: input.identifier });
        const current: LicenseAccess | null = row ? { license: row.license, plan: row.plan } : null;
        const d = await decide(input, current, row?.version ?? "", row?.existing ?? null, row?.count ?? 0, check, record, effects);
        if (d === "lock") break;
        if (d !== "read again") return d;
      }
      return lockedActivate(input, check, record, effects);
    },
    async lookup(hash, identifier) {
      // Activate's read in one statement (the license row version, xmin, lets activate() write
      // without a lock when the row is unchanged), the plan and its grants from the catalog cache
      // as for verify.
      const [row] = await client<LookupRow[]>`
        SELECT l.id, l.product_id, l.plan_id, l.status,
               (extract(epoch FROM l.valid_until) * 1000)::float8 AS valid_until,
               (extract(epoch FROM l.support_until) * 1000)::float8 AS support_until,
               l.external_customer_id, l.external_workspace_id, l.xmin::text AS version,
               a.id AS activation_id, a.identifier_type, a.label,
               (extract(epoch FROM a.created_at) * 1000)::float8 AS created_at,
               (extract(epoch FROM a.last_seen_at) * 1000)::float8 AS last_seen_at,
               (SELECT count(*) FROM activations c WHERE c.license_id = l.id) AS activation_count,
               (SELECT g.value FROM generations g WHERE g.name = ${CATALOG_GENERATION}) AS catalog,
               EXISTS (SELECT 1 FROM license_addons la WHERE la.license_id = l.id) AS has_addons
          FROM licenses l
          LEFT JOIN activations a ON a.license_id = l.id AND a.identifier = ${identifier}
         WHERE l.key_hash = ${hash}`;
      if (!row) return null;
      const cached = await planOf(row.catalog ?? 0, row.plan_id);
      if (!cached) return null;
      return {
        access: { license: licenseOf(row), plan: cached.plan },
        grants: row.has_addons ? [...cached.grants, ...(await addonGrants(row.id))] : cached.grants,
        existing: lookedUpActivation(row, identifier),
        count: row.activation_count,
        version: row.version,
      } satisfies ActivationLookup;
    },
    async findForVerify(hash, identifier) {
      // Verify's read in one statement (one round trip, a prepared statement per connection):
      // license and activation joined, the catalog generation, and whether the license has add-ons.
      // The plan and its features come from the node's catalog cache under that generation
      // (catalog-cache.ts); a second statement loads them only when the cache misses, and a license
      // with add-ons (rare) reads their grants with another. Measured with pgbench (prepared, one
      // client, busy machine): aggregating plan features and add-on grants in this statement took
      // 120 µs per execution, this one 60–70 µs, a bare indexed read of the license row 30–40 µs.
      // Instants come back as epoch ms, converted without a date parser.
      const [row] = await client<VerifyRow[]>`
        SELECT l.id, l.product_id, l.plan_id, l.status,
               (extract(epoch FROM l.valid_until) * 1000)::float8 AS valid_until,
               (extract(epoch FROM l.support_until) * 1000)::float8 AS support_until,
               l.external_customer_id, l.external_workspace_id,
               a.id AS activation_id, (extract(epoch FROM a.last_seen_at) * 1000)::float8 AS last_seen_at,
               (SELECT g.value FROM generations g WHERE g.name = ${CATALOG_GENERATION}) AS catalog,
               EXISTS (SELECT 1 FROM license_addons la WHERE la.license_id = l.id) AS has_addons
          FROM licenses l
          JOIN activations a ON a.license_id = l.id AND a.identifier = ${identifier}
         WHERE l.key_hash = ${hash}`;
      if (!row) return null;
      const cached = await planOf(row.catalog ?? 0, row.plan_id);
      if (!cached) return null;
      return {
        license: licenseOf(row),
        plan: cached.plan,
        activation: { id: row.activation_id, lastSeenAt: ms(row.last_seen_at) },
        grants: row.has_addons ? [...cached.grants, ...(await addonGrants(row.id))] : cached.grants,
      } satisfies VerifyLookup;
    },
    async touch(id, at, notSeenSince) {
      // Conditional: another node may have just touched it. Skipped while another transaction holds
      // the row (SKIP LOCKED): a last-seen time is not worth a verify waiting; the next one finds it
      // still due.
      await autocommitWrite(
        () => client`
        UPDATE activations SET last_seen_at = ${at.toISOString()}::timestamptz
         WHERE id = (SELECT a.id FROM activations a
                      WHERE a.id = ${id} AND (a.last_seen_at IS NULL OR a.last_seen_at <= ${notSeenSince.toISOString()}::timestamptz)
                      FOR UPDATE SKIP LOCKED)`,
        "skip",
      );
    },
    async deactivate(licenseId, identifier, effects) {
      return db.transaction(async (tx) => {
        const [removed] = await tx
          .delete(activations)
          .where(and(eq(activations.licenseId, licenseId), eq(activations.identifier, identifier)))
          .returning();
        if (!removed) return false;
        if (effects) await writeEffectsPg(tx, effects(removed));
        return true;
      });
    },
    async listByLicense(licenseId, page) {
      return activationsOfLicenseQueryPg(db, licenseId, page);
    },
    async remove(licenseId, activationId, effects) {
      return db.transaction(async (tx) => {
        const [removed] = await tx
          .delete(activations)
          .where(and(eq(activations.id, activationId), eq(activations.licenseId, licenseId)))
          .returning();
        if (!removed) return null;
        await writeEffectsPg(tx, effects(removed));
        return removed;
      });
    },
  };
}
