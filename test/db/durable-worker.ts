// Child process of test/db/durable.test.ts (run under strace): `count` transactions through the
// SQLite DataStore's gate, each writing one settings row, durable or not, between two markers.
import { openDatabase } from "../../src/db/client";
import { runMigrations } from "../../src/db/migrate";
import { createSqliteGate } from "../../src/db/transaction.sqlite";
import { existsSync } from "node:fs";

/** A marker strace sees whatever stdout is: a lookup of a path that does not exist. */
const mark = (name: string) => existsSync(`/nonexistent-keyward-${name}`);

const [path, mode, count] = [process.argv[2]!, process.argv[3]!, Number(process.argv[4] ?? 20)];
const handle = openDatabase(path);
runMigrations(handle.sqlite, 1);
const gate = createSqliteGate(handle);
const insert = handle.sqlite.query("INSERT INTO settings (key, value, updated_at) VALUES (?, '{}', 1)");
// Everything before this point (migrations, their checkpoint) is not counted: the test counts the
// syncs between the two markers (test/db/durable.test.ts).
mark("BEGIN-COUNT");
for (let i = 0; i < count; i++) {
  await gate.run(async () => insert.run(`${mode}-${i}`), { durable: mode === "durable" });
}
mark("END-COUNT");
process.exit(0);
