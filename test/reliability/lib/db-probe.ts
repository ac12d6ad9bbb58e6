// Read-only look into Keyward's SQLite file for the reliability checks. EVERY table and column name
// the reliability suite depends on lives in SCHEMA below, so a rename at merge time is a one-line
// change here; `assertSchema` fails with the actual tables and columns when a name does not match.
import { Database } from "bun:sqlite";

export const SCHEMA = {
  activations: { table: "activations", licenseId: "license_id", identifier: "identifier" },
  /** One row per (license, feature, period); `used` is the counter the quota applies to. */
  usage: { table: "usage_counters", licenseId: "license_id", feature: "feature", used: "used" },
  /** One row per accepted usage report. */
  usageEvents: { table: "usage_events", licenseId: "license_id", feature: "feature" },
} as const;

export class DbProbe {
  readonly db: Database;

  constructor(path: string) {
    // readonly: the probe can never repair what it is checking.
    this.db = new Database(path, { readonly: true });
  }

  close(): void {
    this.db.close();
  }

  /** `PRAGMA integrity_check` rows; ["ok"] when the file is sound. */
  integrityCheck(): string[] {
    return this.db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all().map((r) => r.integrity_check);
  }

  foreignKeyViolations(): number {
    return this.db.query("PRAGMA foreign_key_check").all().length;
  }

  /** Throws naming the real tables/columns when SCHEMA does not match the database. */
  assertSchema(parts: (keyof typeof SCHEMA)[] = ["activations", "usage"]): void {
    const problems: string[] = [];
    for (const part of parts) {
      const { table, ...cols } = SCHEMA[part];
      const columns = this.db.query<{ name: string }, []>(`PRAGMA table_info("${table}")`).all().map((c) => c.name);
      if (columns.length === 0) {
        problems.push(`table "${table}" (${part}) does not exist`);
        continue;
      }
      for (const c of Object.values(cols)) if (!columns.includes(c)) problems.push(`column ${table}.${c} missing (has: ${columns.join(", ")})`);
    }
    if (problems.length) {
      const tables = this.db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all().map((t) => t.name);
      throw new Error(`db-probe SCHEMA does not match the database; update test/reliability/lib/db-probe.ts.\n${problems.join("\n")}\ntables: ${tables.join(", ")}`);
    }
  }

  activationIdentifiers(licenseId: string): Set<string> {
    const a = SCHEMA.activations;
    return new Set(
      this.db
        .query<{ identifier: string }, [string]>(`SELECT "${a.identifier}" AS identifier FROM "${a.table}" WHERE "${a.licenseId}" = ?`)
        .all(licenseId)
        .map((r) => r.identifier),
    );
  }

  /** How many usage events (accepted reports) a license has for a feature. */
  usageEventCount(licenseId: string, feature: string): number {
    const e = SCHEMA.usageEvents;
    return this.db
      .query<{ n: number }, [string, string]>(`SELECT COUNT(*) AS n FROM "${e.table}" WHERE "${e.licenseId}" = ? AND "${e.feature}" = ?`)
      .get(licenseId, feature)!.n;
  }

  /** The counter of a quota feature (summed over period rows: a run never spans a period boundary). */
  usageUsed(licenseId: string, feature: string): number {
    const u = SCHEMA.usage;
    const row = this.db
      .query<{ used: number | null }, [string, string]>(`SELECT SUM("${u.used}") AS used FROM "${u.table}" WHERE "${u.licenseId}" = ? AND "${u.feature}" = ?`)
      .get(licenseId, feature);
    return row?.used ?? 0;
  }
}
