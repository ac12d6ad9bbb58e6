// Keyward on a PostgreSQL database whose default_transaction_isolation is REPEATABLE READ or
// SERIALIZABLE (some organisations set it for every database). Keyward's rules are written for READ
// COMMITTED: its transactions now say so on BEGIN (db/pg.ts), and its single-statement writes run
// again on a serialization failure (db/serializable.pg.ts autocommitWrite). Before, under
// SERIALIZABLE, 34 of 40 concurrent activations of one license answered 503, and under REPEATABLE
// READ concurrent usage reports of one counter did too.
import { afterAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestApp, type TestApp } from "../support/app";
import { catalog, post, quota } from "../support/license-api";
import { freshPgDatabase, pgTestUrl, type ScratchDatabase } from "../support/pg";
import { fixedClock } from "../../src/shared/clock";

const statuses = (rs: { status: number }[]) => rs.reduce<Record<number, number>>((m, r) => ((m[r.status] = (m[r.status] ?? 0) + 1), m), {});
const times = <T>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));

for (const level of ["repeatable read", "serializable"]) {
  describe.skipIf(!pgTestUrl())(`a database whose default isolation is ${level}`, () => {
    const databases: ScratchDatabase[] = [];
    const apps: TestApp[] = [];
    afterAll(async () => {
      for (const a of apps) await a.close();
      for (const d of databases) await d.drop();
    });
    async function node(other?: TestApp): Promise<TestApp> {
      let url = other?.deps.config.databaseUrl;
      if (!url) {
        const database = await freshPgDatabase("isolation", { migrated: true });
        databases.push(database);
        const admin = postgres(database.url, { max: 1, onnotice: () => {} });
        await admin.unsafe(`ALTER DATABASE "${database.name}" SET default_transaction_isolation = '${level}'`);
        await admin.end();
        url = database.url;
      }
      const app = await createTestApp({
        engine: "postgres",
        env: { DATABASE_URL: url, RATE_LIMIT_PUBLIC_PER_MINUTE: "5000", ...(other ? { RELEASE_KEY_ENCRYPTION_KEY: other.deps.config.masterKeyHex! } : {}) },
        clock: other?.clock ?? fixedClock(),
        ...(other ? { sameDatabaseAs: other } : {}),
      });
      apps.push(app);
      return app;
    }

    test("concurrent activations, usage reports and floating checkouts of one license all succeed, counted exactly", async () => {
      const t = await node();
      const [setting] = await t.exec<{ level: string }>("SELECT current_setting('default_transaction_isolation') AS level");
      expect(setting!.level).toBe(level);
      const { key, license } = await catalog(t, { maxActivations: 100, floating: true, floatingTimeout: 10 }, [quota("calls", 1000)]);
      expect(statuses(await times(40, (i) => post(t, "/license/activate", { license_key: key, identifier: `device-${i}` })))).toEqual({ 200: 40 });
      expect(statuses(await times(40, () => post(t, "/license/usage", { license_key: key, feature: "calls", quantity: 1 })))).toEqual({ 200: 40 });
      expect(statuses(await times(40, (i) => post(t, "/license/floating/checkout", { license_key: key, identifier: `seat-${i}` })))).toEqual({ 200: 40 });
      const [{ n }] = (await t.exec<{ n: number }>("SELECT count(*)::int AS n FROM activations WHERE license_id = $1", [license.id])) as [{ n: number }];
      expect(n).toBe(40);
      const [{ used }] = (await t.exec<{ used: number }>("SELECT used::int AS used FROM usage_counters WHERE license_id = $1", [license.id])) as [{ used: number }];
      expect(used).toBe(40);
    });

    test("single-statement writes racing on one row (last seen, an API key's last use, two nodes' rate-limit leases) all succeed", async () => {
      const a = await node();
      const b = await node(a);
      const { key } = await catalog(a, { maxActivations: 5 });
      expect((await post(a, "/license/activate", { license_key: key, identifier: "device-1" })).status).toBe(200);
      // Due for a last-seen write on every one of them at once, from two nodes.
      a.clock.advance(3 * 24 * 3600_000);
      const verifies = await times(40, (i) => post(i % 2 ? a : b, "/license/verify", { license_key: key, identifier: "device-1" }));
      expect(statuses(verifies)).toEqual({ 200: 40 });
      // An API key touched by every request at once (its last use is over a minute old).
      const adminKey = await a.apiKey(["admin"]);
      a.clock.advance(2 * 60_000);
      const lists = await times(30, (i) => (i % 2 ? a : b).request("GET", "/api/v1/admin/products", { key: adminKey }));
      expect(statuses(lists)).toEqual({ 200: 30 });
    });
  });
}
