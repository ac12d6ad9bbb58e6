// Online backup of the SQLite database. VACUUM INTO writes a consistent, compacted copy of the
// database as of one transaction, including pages still in the WAL, while the service keeps
// serving. Copying keyward.db with cp while it runs does not do that: recent commits may still sit
// in keyward.db-wal.
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

export function backupDatabase(sqlite: Database, target: string): { path: string; bytes: number } {
  const path = resolve(target);
  if (existsSync(path)) throw new Error(`${path} already exists; choose a new file name`);
  mkdirSync(dirname(path), { recursive: true });
  sqlite.run("VACUUM INTO ?", [path]);
  const copy = new Database(path, { readonly: true });
  try {
    const check = copy.query("PRAGMA integrity_check").get() as { integrity_check: string };
    if (check.integrity_check !== "ok") throw new Error(`the backup at ${path} failed its integrity check: ${check.integrity_check}`);
  } finally {
    copy.close();
  }
  return { path, bytes: statSync(path).size };
}
