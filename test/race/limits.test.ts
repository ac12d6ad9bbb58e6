// The spec's concurrency rules across several Keyward processes on one database, on each engine
// (SQLite file; PostgreSQL with TEST_DATABASE_URL): activation limit, usage quota, floating seats,
// Idempotency-Key, the brute-force lockout, a token-key rotation reaching every node, and no
// acknowledged write lost when a node is killed mid-load.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engines } from "../contract/harness";
import { catalog, decodeToken, quota } from "../support/license-api";
import { eventually } from "../process/support";
import { all, postJson, tally } from "./support";
import { startCluster, type Cluster } from "./cluster";
import type { Engine } from "../../src/db/store";
import { hasTool, REQUIRE_TOOLS_VAR, TOOLS } from "../support/tools";

const NODES = 3;

/**
 * Each engine, and PostgreSQL once more with the nodes behind a real PgBouncer in transaction mode
 * (each transaction possibly on another server connection): no rule may depend on session state.
 */
const variants: { engine: Engine; pooler: boolean }[] = engines().map((engine) => ({ engine, pooler: false }));
if (engines().includes("postgres")) {
  if (hasTool("pgbouncer") || process.env[REQUIRE_TOOLS_VAR] === "1") variants.push({ engine: "postgres", pooler: true });
  else console.warn(`SKIP (pgbouncer not installed; apt-get install -y ${TOOLS.pgbouncer.apt}): ${NODES} nodes on postgres through PgBouncer`);
}

for (const { engine, pooler } of variants) {
  describe(`${NODES} nodes on ${engine}${pooler ? " through PgBouncer (transaction mode)" : ""}`, () => {
    let c: Cluster;
    beforeAll(async () => {
      c = await startCluster(engine, NODES, {}, { pooler });
    }, 60_000);
    afterAll(() => c?.close());

    const status = async (key: string, feature = "api") =>
      (await postJson(c.url(0), "/license/usage/status", { license_key: key, feature })).body.data.used as number;

    /** The counter holds every acknowledged report and nothing never sent, each with its event row (one transaction). */
    const expectNoAcknowledgedUsageLost = async (key: string, licenseId: string, acked: number, sent: number) => {
      const used = await status(key);
      expect(acked).toBeGreaterThan(300);
      expect(used).toBeGreaterThanOrEqual(acked);
      expect(used).toBeLessThanOrEqual(sent);
      const [row] = await c.t.exec<{ n: number }>("SELECT count(*) AS n FROM usage_events WHERE license_id = $1", [licenseId]);
      expect(Number(row!.n)).toBe(used);
    };

    test("300 concurrent activations against max_activations = 10 → exactly 10", async () => {
      const { key, license } = await catalog(c.t, { maxActivations: 10 });
      const results = await all(300, (i) => postJson(c.url(i), "/license/activate", { license_key: key, identifier: `device-${i}` }));
      expect(tally(results)).toEqual({ 200: 10, 409: 290 });
      expect(results.filter((r) => r.status === 409).every((r) => r.body.error.code === "ACTIVATION_LIMIT")).toBe(true);
      expect(await c.t.deps.repos.activations.listByLicense(license.id)).toHaveLength(10);
    });

    test("50 concurrent activations of one identifier → one slot", async () => {
      const { key, license } = await catalog(c.t, { maxActivations: 5 });
      const results = await all(50, (i) => postJson(c.url(i), "/license/activate", { license_key: key, identifier: "the-one-device" }));
      expect(tally(results)).toEqual({ 200: 50 });
      expect(results.filter((r) => r.body.data.status === "activated")).toHaveLength(1);
      expect(await c.t.deps.repos.activations.listByLicense(license.id)).toHaveLength(1);
    });

    test("deactivations racing activations: only freed slots are refilled", async () => {
      const { key, license } = await catalog(c.t, { maxActivations: 3 });
      for (let i = 0; i < 3; i++) await postJson(c.url(i), "/license/activate", { license_key: key, identifier: `seed-${i}` });
      const results = await all(60, (i) =>
        i % 20 === 0
          ? postJson(c.url(i), "/license/deactivate", { license_key: key, identifier: `seed-${i / 20}` })
          : postJson(c.url(i), "/license/activate", { license_key: key, identifier: `new-${i}` }),
      );
      expect(results.every((r) => r.status < 500)).toBe(true);
      expect(results.filter((_, i) => i % 20 === 0).every((r) => r.status === 200)).toBe(true);
      const activated = results.filter((r) => r.status === 200 && r.body.data?.status === "activated").length;
      expect(activated).toBeLessThanOrEqual(3);
      expect(await c.t.deps.repos.activations.listByLicense(license.id)).toHaveLength(activated);
    });

    test("2,000 concurrent usage increments against a quota of 1,000 → exactly 1,000 accepted, counter 1,000", async () => {
      const { key } = await catalog(c.t, {}, [quota("api", 1000)]);
      const results = await all(2000, (i) => postJson(c.url(i), "/license/usage", { license_key: key, feature: "api", metadata: { i } }));
      expect(tally(results)).toEqual({ 200: 1000, 429: 1000 });
      // Every accepted report saw a distinct counter value: no lost update.
      expect(new Set(results.filter((r) => r.status === 200).map((r) => r.body.data.used)).size).toBe(1000);
      expect(await status(key)).toBe(1000);
    }, 60_000);

    test("mixed quantities never overshoot, and every accepted report is counted", async () => {
      const { key } = await catalog(c.t, {}, [quota("api", 100)]);
      const results = await all(200, (i) => postJson(c.url(i), "/license/usage", { license_key: key, feature: "api", quantity: (i % 7) + 1 }));
      const acceptedSum = results.reduce((n, r, i) => (r.status === 200 ? n + (i % 7) + 1 : n), 0);
      const used = await status(key);
      expect(used).toBeLessThanOrEqual(100);
      expect(used).toBe(acceptedSum);
      expect(used).toBeGreaterThan(100 - 7);
    });

    test("100 concurrent floating checkouts against 3 seats → 3; re-checkouts of one identifier keep one session", async () => {
      const { key, license } = await catalog(c.t, { floating: true, maxActivations: 3 });
      const results = await all(100, (i) => postJson(c.url(i), "/license/floating/checkout", { license_key: key, identifier: `user-${i}` }));
      expect(tally(results)).toEqual({ 200: 3, 409: 97 });
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.body.error).toMatchObject({ code: "FLOATING_LIMIT", details: { active_sessions: 3, max_sessions: 3 } });
      }
      const other = await catalog(c.t, { floating: true, maxActivations: 2 });
      const same = await all(40, (i) => postJson(c.url(i), "/license/floating/checkout", { license_key: other.key, identifier: "same" }));
      expect(tally(same)).toEqual({ 200: 40 });
      expect(new Set(same.map((r) => r.body.data.session_id)).size).toBe(1);
      // The nodes run on the real clock; the sessions they opened are live now.
      expect(await c.t.deps.repos.floating.listActive(license.id, new Date())).toHaveLength(3);
    });

    test("50 requests with one Idempotency-Key → one effect (usage, activation, floating)", async () => {
      const u = await catalog(c.t, {}, [quota("api", 1000)]);
      const body = { license_key: u.key, feature: "api", quantity: 3 };
      const results = await all(50, (i) => postJson(c.url(i), "/license/usage", body, { "idempotency-key": `one-${engine}` }));
      const fresh = results.filter((r) => r.status === 200 && r.headers.get("idempotent-replayed") === null);
      expect(fresh).toHaveLength(1);
      for (const r of results) {
        expect([200, 409]).toContain(r.status);
        if (r.status === 200) expect(r.body).toEqual(fresh[0]!.body);
        else expect(r.body.error.code).toBe("IDEMPOTENCY_IN_FLIGHT");
      }
      expect(await status(u.key)).toBe(3);

      const a = await catalog(c.t, { maxActivations: 1 });
      const acts = await all(50, (i) => postJson(c.url(i), "/license/activate", { license_key: a.key, identifier: "pc" }, { "idempotency-key": "act" }));
      expect(new Set(acts.filter((r) => r.status === 200).map((r) => r.body.data.token)).size).toBe(1);
      expect(await c.t.deps.repos.activations.listByLicense(a.license.id)).toHaveLength(1);

      const f = await catalog(c.t, { floating: true, maxActivations: 5 });
      const outs = await all(50, (i) => postJson(c.url(i), "/license/floating/checkout", { license_key: f.key, identifier: "w" }, { "idempotency-key": "fl" }));
      expect(new Set(outs.filter((r) => r.status === 200).map((r) => r.body.data.session_id)).size).toBe(1);
    });

    test("a token-key rotation through node A is used by B and C within 5 s, without restarts", async () => {
      const { key } = await catalog(c.t, { maxActivations: 3 });
      expect((await postJson(c.url(0), "/license/activate", { license_key: key, identifier: "rot" })).status).toBe(200);
      const kidOn = async (i: number) =>
        decodeToken((await postJson(c.url(i), "/license/verify", { license_key: key, identifier: "rot" })).body.data.token).kid as string;
      const before = await kidOn(1);
      const res = await fetch(`${c.url(0)}/api/v1/admin/signing-keys/rotate`, { method: "POST", headers: { authorization: `Bearer ${c.t.adminKey}` } });
      expect(res.status).toBe(200);
      const { kid } = ((await res.json()) as { data: { kid: string } }).data;
      expect(kid).not.toBe(before);
      expect(await kidOn(0)).toBe(kid);
      const started = performance.now();
      await eventually(async () => (await kidOn(1)) === kid && (await kidOn(2)) === kid, "B and C sign with the rotated key", 5_000);
      expect(performance.now() - started).toBeLessThan(5_000);
    });

    test("SIGKILL of one node mid-load loses no acknowledged write", async () => {
      const { key, license } = await catalog(c.t, {}, [quota("api", 100_000)]);
      const victim = await c.addNode();
      const urls = [c.url(0), c.url(1), victim.url];
      let acked = 0;
      let sent = 0;
      const one = async (i: number) => {
        sent += 1;
        try {
          const r = await postJson(urls[i % 3]!, "/license/usage", { license_key: key, feature: "api" });
          if (r.status === 200) acked += 1;
        } catch {
          // the killed node's connections drop: not acknowledged
        }
      };
      const load = all(900, async (i) => {
        await Bun.sleep(Math.floor(i / 3));
        await one(i);
      });
      await Bun.sleep(120);
      victim.proc.kill("SIGKILL");
      await load;
      await expectNoAcknowledgedUsageLost(key, license.id, acked, sent);
    }, 60_000);

    // PostgreSQL ends every connection of every node twice mid-load, as a restart or failover does
    // (docs/operations.md, "When PostgreSQL ends connections"): requests in flight may fail, but no
    // node crashes or hangs, no acknowledged write is lost, and every node serves again at once.
    test.skipIf(engine !== "postgres")("PostgreSQL ending every connection mid-load: no node dies, no acknowledged write lost, all serve again", async () => {
      const { key, license } = await catalog(c.t, {}, [quota("api", 100_000)]);
      // The cluster's first three nodes (the SIGKILL test above added a node it killed).
      const nodes = c.nodes.slice(0, NODES);
      const url = (i: number) => nodes[i % NODES]!.url;
      let acked = 0;
      let sent = 0;
      const load = all(1200, async (i) => {
        await Bun.sleep(Math.floor(i / 2));
        sent += 1;
        try {
          const r = await postJson(url(i), "/license/usage", { license_key: key, feature: "api" });
          if (r.status === 200) acked += 1;
        } catch {
          // not acknowledged
        }
      });
      const endAll = () =>
        c.t.exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
      await Bun.sleep(150);
      await endAll();
      await Bun.sleep(250);
      await endAll();
      await load;
      // Alive, or the reason it died (an unhandled rejection from the driver ended a node before
      // scripts/patch-deps.mjs repair 4).
      for (const n of nodes) expect(n.proc.exitCode === null ? "running" : `exited ${n.proc.exitCode}: ${n.output().stderr.slice(-1500)}`).toBe("running");
      // Every node answers, within the reconnect delay's cap (2 s).
      for (let i = 0; i < NODES; i++) {
        await eventually(async () => (await postJson(url(i), "/license/usage/status", { license_key: key, feature: "api" })).status === 200, `node ${i} serves`, 3_000);
      }
      await expectNoAcknowledgedUsageLost(key, license.id, acked, sent);
      // And a burst on every node at once succeeds whole.
      const burst = await all(60, (i) => postJson(url(i), "/license/usage", { license_key: key, feature: "api" }));
      expect(tally(burst)).toEqual({ 200: 60 });
    }, 60_000);

    // Last: it locks this client address out of activation on every node.
    test("a lockout triggered through node A holds on nodes B and C", async () => {
      const unknown = { license_key: "KW-AAAAAAAA-AAAAAAAA-AAAAAAAA-AAAAAAAA", identifier: "x" };
      for (let i = 0; i < 5; i++) expect((await postJson(c.url(0), "/license/activate", unknown)).status).toBe(404);
      for (const i of [1, 2]) {
        const r = await postJson(c.url(i), "/license/activate", unknown);
        expect(r.status).toBe(429);
        expect(r.body.error.code).toBe("LOCKED_OUT");
      }
    });
  });
}
