// The SQLite gate (src/db/transaction.sqlite.ts): one connection serves the whole process, so a
// DataStore.transaction and the other requests' repository calls must not interleave, either way.
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type DbHandle } from "../../src/db/client";
import { createSqliteGate } from "../../src/db/transaction.sqlite";

let dir: string;
let handle: DbHandle;
afterEach(async () => {
  await handle?.close();
  rmSync(dir, { recursive: true, force: true });
});

const open = () => {
  dir = mkdtempSync(join(tmpdir(), "keyward-gate-"));
  handle = openDatabase(join(dir, "keyward.db"));
  return createSqliteGate(handle);
};

// A repository method written once (repo.sql.ts) awaits between its statements.
const twoStatements = (log: string[]) => ({
  async both() {
    log.push(`first, in a transaction: ${handle.sqlite.inTransaction}`);
    await Promise.resolve();
    await Promise.resolve();
    log.push(`second, in a transaction: ${handle.sqlite.inTransaction}`);
  },
});

test("a transaction waits for the repository calls already under way: none of their statements runs inside it", async () => {
  const gate = open();
  const log: string[] = [];
  const repos = gate.gate({ r: twoStatements(log) });
  const call = repos.r.both();
  const unit = gate.run(async () => void log.push(`unit, in a transaction: ${handle.sqlite.inTransaction}`));
  await Promise.all([call, unit]);
  expect(log).toEqual(["first, in a transaction: false", "second, in a transaction: false", "unit, in a transaction: true"]);
});

test("a call made while a transaction runs goes after it; calls made before its turn settle before it begins", async () => {
  const gate = open();
  const log: string[] = [];
  const repos = gate.gate({ r: twoStatements(log) });
  let finish!: () => void;
  const started = Promise.withResolvers<void>();
  const first = repos.r.both();
  const unit = gate.run(async () => {
    log.push("unit");
    started.resolve();
    await new Promise<void>((r) => (finish = r));
    log.push("unit end");
  });
  const beforeItsTurn = repos.r.both();
  await started.promise;
  const during = repos.r.both();
  await Promise.resolve();
  finish();
  await Promise.all([first, unit, beforeItsTurn, during]);
  const outside = ["first, in a transaction: false", "second, in a transaction: false"];
  expect(log.slice(0, 4).sort()).toEqual([...outside, ...outside].sort());
  expect(log.slice(4)).toEqual(["unit", "unit end", ...outside]);
});
