// Reading rows back from either engine (assertions on what a repository wrote, or did not write),
// and the audit entries the suites pass in.
import * as sqliteSchema from "../../src/db/schema";
import * as pgSchema from "../../src/db/schema-pg";
import type { AuditEntry } from "../../src/modules/audit/repo";
import type { Effects } from "../../src/modules/outbox/effects";
import { SYSTEM_ACTOR } from "../../src/shared/actor";
import type { Opened } from "./harness";

type Readable = "products" | "plans" | "planFeatures" | "addons" | "settings" | "apiKeys" | "auditLog" | "signingKeys" | "users" | "sessions" | "signInCodes" | "outbox";

/** Writes rows straight into a table of either engine (fixtures for tables seed.ts does not cover). */
export async function insertInto(o: Opened, table: "auditLog" | "signingKeys", rows: Record<string, unknown>[]): Promise<void> {
  if (rows.length === 0) return;
  if (o.sqlite) o.sqlite.db.insert(sqliteSchema[table] as any).values(rows as any).run();
  else await o.pg!.db.insert(pgSchema[table] as any).values(rows as any);
}

/** Every row of a table, in no particular order. */
export async function readRows(o: Opened, table: Readable): Promise<Record<string, any>[]> {
  if (o.sqlite) return o.sqlite.db.select().from(sqliteSchema[table] as any).all() as Record<string, any>[];
  return (await o.pg!.db.select().from(pgSchema[table] as any)) as Record<string, any>[];
}

/** The audit log's actions, oldest first. */
export async function auditActions(o: Opened): Promise<string[]> {
  const rows = await readRows(o, "auditLog");
  return rows
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1))
    .map((r) => r.action as string);
}

export const AT = new Date("2026-11-22T10:00:00.000Z");

/** Effects with only an audit entry (the admin mutations' usual side effect). */
export function audited(action: string, over: Partial<AuditEntry> = {}): Effects {
  return {
    audit: {
      actor: { ...SYSTEM_ACTOR, ip: "203.0.113.9", requestId: "req-1" },
      action,
      entityType: action.split(".")[0]!,
      entityId: null,
      productId: null,
      changes: { note: action },
      at: AT,
      ...over,
    },
  };
}

/** Awaits `p` and returns the AppError it rejected with (fails the test when it resolved). */
export async function rejection(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return { code: (e as { code?: string }).code ?? "(no code)", message: (e as Error).message };
  }
  throw new Error("expected a rejection");
}
