// Reads and writes for contract suites that the repositories under test do not offer: audit rows,
// row counts, Idempotency-Key claims, add-on rows, and extra "nodes" (independent pools on the same
// PostgreSQL database) for the concurrency cases.
import { and, asc, count, eq, sql } from "drizzle-orm";
import * as sqliteSchema from "../../src/db/schema";
import * as pgSchema from "../../src/db/schema-pg";
import { openPostgres, type PgHandle } from "../../src/db/pg";
import { createPgRepos } from "../../src/repos.pg";
import type { Repos } from "../../src/deps";
import type { Effects } from "../../src/modules/outbox/effects";
import type { Addon } from "../../src/modules/addons/repo";
import type { ClaimCompletion, IdempotencyScope } from "../../src/modules/idempotency/repo";
import { SYSTEM_ACTOR } from "../../src/shared/actor";
import { newId } from "../../src/shared/ids";
import { pgTestUrl } from "../support/pg";
import { insertRows, SEED_TIME } from "./seed";
import type { Opened } from "./harness";

/** Effects with only an audit entry. */
export function audited(action: string, entityId: string | null, changes: Record<string, unknown> | null = null): Effects {
  return { audit: { actor: SYSTEM_ACTOR, action, entityType: "license", entityId, productId: null, changes, at: SEED_TIME } };
}

/** Audit rows as (action, entityId, changes), in action then entity order. */
export async function auditRows(o: Opened): Promise<{ action: string; entityId: string | null; changes: unknown }[]> {
  let rows: { action: string; entityId: string | null; changes: unknown }[];
  if (o.sqlite) {
    const t = sqliteSchema.auditLog;
    rows = o.sqlite.db.select({ action: t.action, entityId: t.entityId, changes: t.changes }).from(t).all();
  } else {
    const t = pgSchema.auditLog;
    rows = await o.pg!.db.select({ action: t.action, entityId: t.entityId, changes: t.changes }).from(t);
  }
  return rows.sort((a, b) => (a.action + (a.entityId ?? "") < b.action + (b.entityId ?? "") ? -1 : 1));
}

type Counted = "activations" | "floatingSessions" | "usageCounters" | "usageEvents" | "licenseAddons" | "licenses";

/** Rows of a table, for one license when given. */
export async function countRows(o: Opened, table: Counted, licenseId?: string): Promise<number> {
  if (o.sqlite) {
    const t = sqliteSchema[table] as typeof sqliteSchema.activations;
    const where = licenseId ? eq(table === "licenses" ? (t as any).id : t.licenseId, licenseId) : undefined;
    return o.sqlite.db.select({ n: count() }).from(t).where(where).get()!.n;
  }
  const t = pgSchema[table] as typeof pgSchema.activations;
  const where = licenseId ? eq(table === "licenses" ? (t as any).id : t.licenseId, licenseId) : undefined;
  const [row] = await o.pg!.db.select({ n: count() }).from(t).where(where);
  return row!.n;
}

/** Usage events of a license, oldest first. */
export async function usageEvents(o: Opened, licenseId: string) {
  if (o.sqlite) {
    const t = sqliteSchema.usageEvents;
    return o.sqlite.db
      .select({ feature: t.feature, periodKey: t.periodKey, quantity: t.quantity, metadata: t.metadata, createdAt: t.createdAt })
      .from(t)
      .where(eq(t.licenseId, licenseId))
      .orderBy(asc(t.createdAt), asc(t.id))
      .all();
  }
  const t = pgSchema.usageEvents;
  return o.pg!.db
    .select({ feature: t.feature, periodKey: t.periodKey, quantity: t.quantity, metadata: t.metadata, createdAt: t.createdAt })
    .from(t)
    .where(eq(t.licenseId, licenseId))
    .orderBy(asc(t.createdAt), asc(t.id));
}

export async function seedAddon(o: Opened, productId: string, over: Partial<Addon> = {}): Promise<Addon> {
  const id = newId();
  const addon: Addon = {
    id,
    productId,
    name: `Addon ${id}`,
    featureName: `feature-${id}`,
    valueType: "bool",
    value: "true",
    quotaLimit: null,
    quotaPeriod: null,
    createdAt: SEED_TIME,
    updatedAt: SEED_TIME,
    ...over,
  };
  await insertRows(o, "addons", [addon as unknown as Record<string, unknown>]);
  return addon;
}

/** An in-flight Idempotency-Key claim, as IdempotencyRepo.claim leaves it. */
export async function seedClaim(o: Opened, claimedAt: Date): Promise<IdempotencyScope> {
  const scope: IdempotencyScope = { key: newId(), route: "/v1/test", scope: `scope-${newId()}` };
  const row = { ...scope, bodyHash: "body", state: "in_flight" as const, responseStatus: null, responseSealed: null, createdAt: claimedAt, completedAt: null };
  if (o.sqlite) o.sqlite.db.insert(sqliteSchema.idempotencyKeys).values(row).run();
  else await o.pg!.db.insert(pgSchema.idempotencyKeys).values(row);
  return scope;
}

export async function claimState(o: Opened, s: IdempotencyScope): Promise<{ state: string; responseStatus: number | null; responseSealed: string | null } | null> {
  if (o.sqlite) {
    const t = sqliteSchema.idempotencyKeys;
    return (
      o.sqlite.db
        .select({ state: t.state, responseStatus: t.responseStatus, responseSealed: t.responseSealed })
        .from(t)
        .where(and(eq(t.key, s.key), eq(t.route, s.route), eq(t.scope, s.scope)))
        .get() ?? null
    );
  }
  const t = pgSchema.idempotencyKeys;
  const [row] = await o.pg!.db
    .select({ state: t.state, responseStatus: t.responseStatus, responseSealed: t.responseSealed })
    .from(t)
    .where(and(eq(t.key, s.key), eq(t.route, s.route), eq(t.scope, s.scope)));
  return row ?? null;
}

/** A Recorder's completion for a claim. */
export const completion = (scope: IdempotencyScope, claimedAt: Date, responseSealed: string): ClaimCompletion => ({
  scope,
  claimedAt,
  status: 200,
  responseSealed,
  at: SEED_TIME,
});

/**
 * `n` independent pools on the PostgreSQL database of `o`, each with its own repository set, like
 * `n` nodes of one deployment. Close them with the returned function.
 */
export async function pgNodes(o: Opened, n: number, max = 4): Promise<{ repos: Repos[]; handles: PgHandle[]; close(): Promise<void> }> {
  const [row] = await o.pg!.sql<{ db: string }[]>`SELECT current_database() AS db`;
  const url = new URL(pgTestUrl()!);
  url.pathname = `/${row!.db}`;
  const handles: PgHandle[] = Array.from({ length: n }, () => openPostgres(url.toString(), { max }));
  return {
    repos: handles.map((h) => createPgRepos(h) as Repos),
    handles,
    close: async () => {
      await Promise.all(handles.map((h) => h.close()));
    },
  };
}

/** Outbox rows as (kind, topic, payload, status, createdAt), oldest first (ids are time-ordered). */
export async function outboxRows(o: Opened): Promise<{ kind: string; topic: string; payload: unknown; status: string; createdAt: Date }[]> {
  if (o.sqlite) {
    const t = sqliteSchema.outbox;
    return o.sqlite.db
      .select({ kind: t.kind, topic: t.topic, payload: t.payload, status: t.status, createdAt: t.createdAt })
      .from(t)
      .orderBy(asc(t.createdAt), asc(t.id))
      .all();
  }
  const t = pgSchema.outbox;
  return await o.pg!.db
    .select({ kind: t.kind, topic: t.topic, payload: t.payload, status: t.status, createdAt: t.createdAt })
    .from(t)
    .orderBy(asc(t.createdAt), sql`${t.id} COLLATE "C"`);
}
