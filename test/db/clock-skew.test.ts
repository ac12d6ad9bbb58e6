// Each node's clock against the database server's (src/db/clock-skew.ts): measured at start and
// every 10 minutes on PostgreSQL, and a warning logged when they differ by more than a second.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPostgres, type PgHandle } from "../../src/db/pg";
import { CLOCK_SKEW_WARN_MS, measureClockSkew, watchClockSkew } from "../../src/db/clock-skew";
import { fixedClock, systemClock, type Clock } from "../../src/shared/clock";
import { createLogger } from "../../src/shared/logger";
import { loadConfig } from "../../src/config";
import { createDeps } from "../../src/container";
import { testEnv } from "../support/app";
import { freshPgDatabase, pgTestUrl, type ScratchDatabase } from "../support/pg";

const FIVE_MINUTES = 5 * 60_000;
const shifted = (byMs: number): Clock => ({ ...systemClock, now: () => new Date(Date.now() + byMs), nowMs: () => Date.now() + byMs });

function capture() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger("warn", (line) => lines.push(JSON.parse(line) as Record<string, unknown>)) };
}
const skewWarnings = (lines: Record<string, unknown>[]) => lines.filter((l) => l.msg === "this node's clock differs from the database server's");

describe.skipIf(!pgTestUrl())("clock skew against PostgreSQL", () => {
  let database: ScratchDatabase;
  let pg: PgHandle;
  beforeAll(async () => {
    database = await freshPgDatabase("clock_skew", { migrated: true });
    pg = openPostgres(database.url, { max: 1 });
  });
  afterAll(async () => {
    await pg?.close();
    await database?.drop();
  });

  test("measures this host's clock as in step with the server (same machine), and a shifted clock by its shift", async () => {
    const same = await measureClockSkew(pg.sql, systemClock);
    expect(Math.abs(same.skewMs)).toBeLessThan(CLOCK_SKEW_WARN_MS);
    for (const by of [FIVE_MINUTES, -FIVE_MINUTES]) {
      const off = await measureClockSkew(pg.sql, shifted(by));
      expect(Math.abs(off.skewMs - by)).toBeLessThan(CLOCK_SKEW_WARN_MS);
    }
  });

  test("the watch warns, naming the difference, only when the clocks differ by more than a second", async () => {
    const quiet = capture();
    const ok = watchClockSkew({ measure: () => measureClockSkew(pg.sql, systemClock), logger: quiet.logger });
    await ok.first;
    ok.stop();
    expect(skewWarnings(quiet.lines)).toEqual([]);

    const loud = capture();
    const off = watchClockSkew({ measure: () => measureClockSkew(pg.sql, shifted(FIVE_MINUTES)), logger: loud.logger });
    await off.first;
    off.stop();
    const [warning, ...more] = skewWarnings(loud.lines);
    expect(more).toEqual([]);
    expect(warning!.level).toBe("warn");
    expect(Math.abs((warning!.skew_ms as number) - FIVE_MINUTES)).toBeLessThan(CLOCK_SKEW_WARN_MS);
  });

  test("a node started on PostgreSQL with a clock six days behind the server's warns at start", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "keyward-skew-"));
    const log = capture();
    const sixDays = 6 * 24 * 60 * 60_000;
    const deps = await createDeps(loadConfig(testEnv(dataDir, { DATABASE_URL: database.url })), fixedClock(Date.now() - sixDays), log.logger);
    try {
      // The first measurement runs in the background of the start.
      for (let i = 0; i < 50 && skewWarnings(log.lines).length === 0; i++) await Bun.sleep(20);
      const [warning] = skewWarnings(log.lines);
      expect(Math.abs((warning!.skew_ms as number) + sixDays)).toBeLessThan(CLOCK_SKEW_WARN_MS);
    } finally {
      await deps.db.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
