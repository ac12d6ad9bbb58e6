// WebhookRepo on every engine: endpoints with their effects, fan-out inserts that are idempotent per
// (event, endpoint), claims of due deliveries that are exact across nodes (claims.ts
// claimDueDeliveries), fenced settlement with the endpoint's failure count and a disable that only one
// attempt performs (and whose effects only it writes: claims.ts settleAttempt, the attempt's unit of
// work), redelivery.
import { afterEach, expect, test } from "bun:test";
import type { AttemptOutcome, WebhookDelivery, WebhookEndpoint, WebhookRepo } from "../../src/modules/webhooks/repo";
import { dueDeliveriesQuery } from "../../src/modules/webhooks/repo.sql";
import { claimDueDeliveries, settleAttempt, type ClaimInput, type SettleInput } from "../../src/modules/webhooks/claims";
import { sqliteQueryDialect } from "../../src/db/dialect/query.sqlite";
import { pgQueryDialect } from "../../src/db/dialect/query.pg";
import { createPgRepos } from "../../src/repos.pg";
import type { Repos } from "../../src/deps";
import { SYSTEM_ACTOR } from "../../src/shared/actor";
import { newId } from "../../src/shared/ids";
import { forEachEngine, type Opened } from "./harness";
import { repoFor } from "./repos";
import { seedProduct } from "./seed";
import { morePools } from "./support-pg";
import { unitOf, withPgUnits, type Unit } from "./unit";

const T0 = new Date("2026-11-21T08:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);
const MIN = 60_000;

function endpointRow(over: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id: newId(),
    url: "https://hooks.example.com/in",
    description: "",
    events: ["license.*"],
    enabled: true,
    productId: null,
    secretEncrypted: "v1.sealed.secret",
    previousSecretEncrypted: null,
    previousSecretExpiresAt: null,
    signingKeyEncrypted: null,
    signingPublicKey: null,
    consecutiveFailures: 0,
    disabledReason: null,
    disabledAt: null,
    createdAt: T0,
    updatedAt: T0,
    ...over,
  };
}

function deliveryRow(endpointId: string, over: Partial<WebhookDelivery> = {}): WebhookDelivery {
  return {
    id: newId(),
    endpointId,
    eventId: newId(),
    eventType: "license.created",
    body: '{"type":"license.created","timestamp":"2026-11-21T08:00:00.000Z","data":{}}',
    status: "pending",
    attempts: 0,
    nextAttemptAt: T0,
    lastAttemptAt: null,
    lastResponseCode: null,
    lastLatencyMs: null,
    lastResponseBody: null,
    lastError: null,
    createdAt: T0,
    deliveredAt: null,
    ...over,
  };
}

const auditOf = (action: string, id: string) => ({
  audit: { actor: SYSTEM_ACTOR, action, entityType: "webhook_endpoint", entityId: id, productId: null, changes: null, at: T0 },
});

const failure = (over: Partial<AttemptOutcome> = {}): AttemptOutcome => ({
  at: at(1000),
  result: "retry",
  nextAttemptAt: at(MIN),
  responseCode: 500,
  latencyMs: 12,
  responseBody: "boom",
  error: "HTTP 500",
  disable: null,
  ...over,
});

forEachEngine("WebhookRepo", (engine, open) => {
  let o: Opened;
  let repos: Repos;
  let repo: WebhookRepo;
  const setup = async () => {
    o = await open();
    repos = repoFor(o);
    repo = repos.webhooks;
  };
  afterEach(() => o?.close());
  const auditActions = async () => (await repos.audit.list({ limit: 100 })).items.map((a) => a.action).sort();
  // The delivery pool's steps (claims.ts): a claim on a node's repositories, an attempt settled in its unit of work.
  const claim = (input: ClaimInput, on: Repos = repos) => claimDueDeliveries(on, input);
  const settle = (input: SettleInput, unit: Unit = unitOf(o)) => unit((r) => settleAttempt(r, input));
  /** `n` units at once: from `n` PostgreSQL nodes; on SQLite through the one process's gate (they take turns). */
  const concurrentUnits = <T>(n: number, body: (units: Unit[]) => Promise<T>) => {
    if (engine === "postgres") return withPgUnits(o, n, body);
    const unit = unitOf(o);
    return body(Array.from({ length: n }, () => unit));
  };

  test("endpoints: create, get, update, list newest first with product filter and cursor, delete", async () => {
    await setup();
    const product = await seedProduct(o);
    const a = await repo.createEndpoint(endpointRow({ events: ["*", "license.revoked"], signingPublicKey: "pk", signingKeyEncrypted: "v1.k" }));
    const b = await repo.createEndpoint(endpointRow({ productId: product.id, createdAt: at(1000), updatedAt: at(1000) }));
    const c = await repo.createEndpoint(endpointRow({ enabled: false, disabledReason: "manual", disabledAt: T0, createdAt: at(2000) }));
    expect(await repo.getEndpoint(a.id)).toEqual(a);
    expect(a.events).toEqual(["*", "license.revoked"]);
    expect(await repo.getEndpoint(newId())).toBeNull();
    // Rows only: the verbs (webhooks/service.ts) write the audit rows.
    expect(await auditActions()).toEqual([]);

    const first = await repo.listEndpoints({ limit: 2 });
    expect(first.items.map((e) => e.id)).toEqual([c.id, b.id]);
    const rest = await repo.listEndpoints({ limit: 2, cursor: first.nextCursor! });
    expect(rest.items.map((e) => e.id)).toEqual([a.id]);
    expect(rest.nextCursor).toBeNull();
    expect((await repo.listEndpoints({ limit: 10, productId: product.id })).items.map((e) => e.id)).toEqual([b.id]);
    expect((await repo.listEnabledEndpoints()).map((e) => e.id).sort()).toEqual([a.id, b.id].sort());

    const updated = await repo.updateEndpoint(a.id, { url: "https://x.example/y", events: ["release.*"], signingKeyEncrypted: null, signingPublicKey: null, updatedAt: at(5000) });
    expect(updated).toEqual({ ...a, url: "https://x.example/y", events: ["release.*"], signingKeyEncrypted: null, signingPublicKey: null, updatedAt: at(5000) });
    expect(await repo.updateEndpoint(newId(), { updatedAt: T0 })).toBeNull();

    await repo.addDeliveries([deliveryRow(a.id)]);
    expect(await repo.deleteEndpoint(a.id)).toBe(true);
    expect(await repo.deleteEndpoint(a.id)).toBe(false);
    expect((await repo.listDeliveries({ endpointId: a.id, limit: 10 })).items).toEqual([]);
    expect(await auditActions()).toEqual([]);
  });

  test("addDeliveries inserts one delivery per (event, endpoint): a second fan-out of the same event adds nothing", async () => {
    await setup();
    const e1 = await repo.createEndpoint(endpointRow());
    const e2 = await repo.createEndpoint(endpointRow());
    const eventId = newId();
    expect(await repo.addDeliveries([deliveryRow(e1.id, { eventId }), deliveryRow(e2.id, { eventId })])).toBe(2);
    expect(await repo.addDeliveries([deliveryRow(e1.id, { eventId }), deliveryRow(e2.id, { eventId })])).toBe(0);
    // Test events have no event id: each is its own delivery.
    expect(await repo.addDeliveries([deliveryRow(e1.id, { eventId: null }), deliveryRow(e1.id, { eventId: null })])).toBe(2);
    expect((await repo.listDeliveries({ endpointId: e1.id, limit: 10 })).items).toHaveLength(3);
    const d = deliveryRow(e2.id, { createdAt: at(1), nextAttemptAt: at(1) });
    await repo.addDeliveries([d]);
    expect(await repo.getDelivery(d.id)).toEqual(d);
    expect((await repo.listDeliveries({ endpointId: e2.id, limit: 1 })).items.map((x) => x.id)).toEqual([d.id]);
    expect((await repo.listDeliveries({ endpointId: e2.id, limit: 10, status: "delivered" })).items).toEqual([]);
    expect((await repo.listDeliveries({ endpointId: e2.id, limit: 10, eventType: "license.created" })).items).toHaveLength(2);
  });

  test("claimDueDeliveries: due, pending, of an enabled endpoint, oldest first; the claim fences settlement", async () => {
    await setup();
    const on = await repo.createEndpoint(endpointRow());
    const off = await repo.createEndpoint(endpointRow({ enabled: false }));
    const old = deliveryRow(on.id, { createdAt: at(-2000), nextAttemptAt: at(-2000) });
    const due = deliveryRow(on.id, { createdAt: at(-1000), nextAttemptAt: at(-1000) });
    const later = deliveryRow(on.id, { nextAttemptAt: at(MIN) });
    const done = deliveryRow(on.id, { status: "delivered" });
    const paused = deliveryRow(off.id);
    await repo.addDeliveries([later, due, done, paused, old]);
    const claimed = await claim({ now: T0, limit: 10, leaseUntil: at(2 * MIN) });
    expect(claimed.map((d) => d.id)).toEqual([old.id, due.id]);
    expect(claimed.every((d) => d.nextAttemptAt.getTime() === at(2 * MIN).getTime())).toBe(true);
    expect(await claim({ now: T0, limit: 10, leaseUntil: at(2 * MIN) })).toEqual([]);

    // A wrong claim records nothing.
    const wrong = await settle({ id: old.id, claim: T0, outcome: failure(), failureThreshold: 20, disableEffects: () => ({}) });
    expect(wrong).toEqual({ settled: false, disabled: null });
    const ok = await settle({ id: old.id, claim: at(2 * MIN), outcome: failure(), failureThreshold: 20, disableEffects: () => ({}) });
    expect(ok).toEqual({ settled: true, disabled: null });
    expect(await repo.getDelivery(old.id)).toMatchObject({ status: "pending", attempts: 1, nextAttemptAt: at(MIN), lastAttemptAt: at(1000), lastResponseCode: 500, lastLatencyMs: 12, lastResponseBody: "boom", lastError: "HTTP 500" });
    expect((await repo.getEndpoint(on.id))!.consecutiveFailures).toBe(1);
    // What a failed attempt's unit reads under lock (the endpoint's health); nothing for an unknown endpoint.
    expect(await unitOf(o)((r) => r.webhooks.lockEndpointHealth(on.id))).toEqual({ enabled: true, consecutiveFailures: 1 });
    expect(await unitOf(o)((r) => r.webhooks.lockEndpointHealth(newId()))).toBeNull();

    const delivered = await settle({
      id: due.id,
      claim: at(2 * MIN),
      outcome: { at: at(2000), result: "delivered", nextAttemptAt: null, responseCode: 204, latencyMs: 3, responseBody: "", error: null, disable: null },
      failureThreshold: 20,
      disableEffects: () => ({}),
    });
    expect(delivered.settled).toBe(true);
    expect(await repo.getDelivery(due.id)).toMatchObject({ status: "delivered", attempts: 1, deliveredAt: at(2000), lastResponseCode: 204, lastError: null });
    expect((await repo.getEndpoint(on.id))!.consecutiveFailures).toBe(0);
    // A settled delivery cannot be settled again with the old claim.
    expect((await settle({ id: due.id, claim: at(2 * MIN), outcome: failure(), failureThreshold: 20, disableEffects: () => ({}) })).settled).toBe(false);

    // A claim that outlived its lease is due again.
    expect((await claim({ now: at(MIN), limit: 10, leaseUntil: at(3 * MIN) })).map((d) => d.id)).toEqual([old.id, later.id]);
  });

  test("the threshold and 410 disable the endpoint once, writing the effects only then (attempts settled at once: from two nodes on PostgreSQL)", async () => {
    await setup();
    const e = await repo.createEndpoint(endpointRow({ consecutiveFailures: 1 }));
    const rows = [deliveryRow(e.id), deliveryRow(e.id), deliveryRow(e.id)];
    await repo.addDeliveries(rows);
    const claimed = await claim({ now: T0, limit: 10, leaseUntil: at(MIN) });
    expect(claimed).toHaveLength(3);
    const disableEffects = (reason: string) => auditOf(`webhook.auto_disable.${reason}`, e.id);
    // Two failures in parallel reach the threshold of 3 (1 + 2): exactly one call disables it.
    const results = await concurrentUnits(2, (units) =>
      Promise.all(claimed.slice(0, 2).map((d, i) => settle({ id: d.id, claim: d.nextAttemptAt, outcome: failure(), failureThreshold: 3, disableEffects }, units[i]))),
    );
    expect(results.map((r) => r.disabled).filter(Boolean)).toEqual(["failures"]);
    expect(await repo.getEndpoint(e.id)).toMatchObject({ enabled: false, disabledReason: "failures", disabledAt: at(1000), consecutiveFailures: 3 });
    // Already disabled: a 410 now records the attempt but disables (and writes) nothing more.
    const gone = await settle({ id: claimed[2]!.id, claim: claimed[2]!.nextAttemptAt, outcome: failure({ result: "failed", nextAttemptAt: null, responseCode: 410, disable: "gone" }), failureThreshold: 3, disableEffects });
    expect(gone).toEqual({ settled: true, disabled: null });
    expect(await repo.getDelivery(claimed[2]!.id)).toMatchObject({ status: "failed", attempts: 1 });
    expect((await auditActions()).filter((a) => a.startsWith("webhook.auto_disable"))).toEqual(["webhook.auto_disable.failures"]);
    // Paused: nothing of a disabled endpoint is claimed.
    expect(await claim({ now: at(10 * MIN), limit: 10, leaseUntil: at(11 * MIN) })).toEqual([]);

    const g = await repo.createEndpoint(endpointRow());
    const d = deliveryRow(g.id);
    await repo.addDeliveries([d]);
    const [c] = await claim({ now: T0, limit: 1, leaseUntil: at(MIN) });
    expect(await settle({ id: c!.id, claim: c!.nextAttemptAt, outcome: failure({ result: "failed", nextAttemptAt: null, disable: "gone" }), failureThreshold: 20, disableEffects })).toEqual({ settled: true, disabled: "gone" });
    expect(await repo.getEndpoint(g.id)).toMatchObject({ enabled: false, disabledReason: "gone", consecutiveFailures: 1 });
  });

  test("race: 12 failed attempts settled at once (from three nodes on PostgreSQL) count 12 and disable the endpoint once, writing its effects once", async () => {
    await setup();
    const e = await repo.createEndpoint(endpointRow());
    await repo.addDeliveries(Array.from({ length: 12 }, () => deliveryRow(e.id)));
    const claimed = await claim({ now: T0, limit: 12, leaseUntil: at(MIN) });
    expect(claimed).toHaveLength(12);
    const disableEffects = (reason: string) => auditOf(`webhook.auto_disable.${reason}`, e.id);
    const results = await concurrentUnits(3, (units) =>
      Promise.all(claimed.map((d, i) => settle({ id: d.id, claim: d.nextAttemptAt, outcome: failure(), failureThreshold: 5, disableEffects }, units[i % 3]))),
    );
    expect(results.every((r) => r.settled)).toBe(true);
    // The endpoint's row lock makes them count one after another: none is lost, and only the fifth disables.
    expect(results.map((r) => r.disabled).filter(Boolean)).toEqual(["failures"]);
    expect(await repo.getEndpoint(e.id)).toMatchObject({ enabled: false, disabledReason: "failures", disabledAt: at(1000), consecutiveFailures: 12 });
    expect((await auditActions()).filter((a) => a.startsWith("webhook.auto_disable"))).toEqual(["webhook.auto_disable.failures"]);
  });

  test("redeliver makes any delivery pending and due now, keeping its id and attempts", async () => {
    await setup();
    const e = await repo.createEndpoint(endpointRow());
    const d = deliveryRow(e.id, { status: "failed", attempts: 4, lastError: "HTTP 500" });
    await repo.addDeliveries([d]);
    const again = await repo.redeliver(d.id, at(5 * MIN));
    expect(again).toMatchObject({ id: d.id, status: "pending", attempts: 4, nextAttemptAt: at(5 * MIN), lastError: "HTTP 500" });
    expect(await repo.redeliver(newId(), T0)).toBeNull();
    expect((await claim({ now: at(5 * MIN), limit: 5, leaseUntil: at(6 * MIN) })).map((x) => x.id)).toEqual([d.id]);
  });

  test("claimDueDeliveries with perEndpoint: no endpoint past its room; a slow endpoint's backlog does not take the claim", async () => {
    await setup();
    const slow = await repo.createEndpoint(endpointRow());
    const healthy = await repo.createEndpoint(endpointRow());
    // 60 older deliveries of the slow endpoint, then one of the healthy one.
    const backlog = Array.from({ length: 60 }, (_, i) => deliveryRow(slow.id, { createdAt: at(-100_000 + i), nextAttemptAt: at(-100_000 + i) }));
    const fresh = deliveryRow(healthy.id, { createdAt: at(-1), nextAttemptAt: at(-1) });
    await repo.addDeliveries([...backlog, fresh]);
    const first = await claim({ now: T0, limit: 50, leaseUntil: at(MIN), perEndpoint: 8 });
    expect(first.filter((d) => d.endpointId === slow.id).map((d) => d.id)).toEqual(backlog.slice(0, 8).map((d) => d.id));
    expect(first.filter((d) => d.endpointId === healthy.id).map((d) => d.id)).toEqual([fresh.id]);
    // Its 8 still in flight: nothing more of the slow endpoint, however much room is left.
    const busy = new Map([[slow.id, 8]]);
    expect(await claim({ now: T0, limit: 50, leaseUntil: at(MIN), perEndpoint: 8, inFlight: busy })).toEqual([]);
    // Two settled: two more, the oldest due.
    const next = await claim({ now: T0, limit: 50, leaseUntil: at(MIN), perEndpoint: 8, inFlight: new Map([[slow.id, 6]]) });
    expect(next.map((d) => d.id)).toEqual(backlog.slice(8, 10).map((d) => d.id));
    // `limit` still bounds the whole claim.
    expect(await claim({ now: T0, limit: 3, leaseUntil: at(MIN), perEndpoint: 8 })).toHaveLength(3);
  });

  test("the claim window reads each endpoint's due deliveries through webhook_deliveries_endpoint_due_idx", async () => {
    await setup();
    if (o.sqlite) {
      const q = dueDeliveriesQuery(sqliteQueryDialect(o.sqlite), T0, 8).toSQL();
      const details = (o.sqlite.sqlite.query(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.params as never[])) as { detail: string }[]).map((p) => p.detail).join("\n");
      expect(details).toContain("webhook_deliveries_endpoint_due_idx");
      expect(details).not.toMatch(/SCAN webhook_deliveries\b(?! USING)/);
      // Driven by the endpoints: the deliveries are only searched, never scanned (not even an index).
      expect(details).not.toMatch(/SCAN webhook_deliveries\b/);
      return;
    }
    const q = dueDeliveriesQuery(pgQueryDialect(o.pg!), T0, 8).toSQL();
    const text = await o.pg!.sql.begin(async (tx) => {
      // Tiny tables make a sequential scan cheapest; forbid it to see the index the plan can use.
      await tx.unsafe("SET LOCAL enable_seqscan = off");
      const rows = (await tx.unsafe(`EXPLAIN ${q.sql}`, q.params as never[])) as unknown as { "QUERY PLAN": string }[];
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    });
    expect(text).toContain("webhook_deliveries_endpoint_due_idx");
    expect(text).not.toMatch(/Seq Scan on webhook_deliveries\b/);
  });

  test("three nodes claiming concurrently never get the same delivery", async () => {
    await setup();
    const endpoints = await Promise.all([0, 1, 2].map(() => repo.createEndpoint(endpointRow())));
    const rows = Array.from({ length: 60 }, (_, i) => deliveryRow(endpoints[i % 3]!.id, { nextAttemptAt: at(i) }));
    await repo.addDeliveries(rows);
    const extra = engine === "postgres" ? await morePools(o, 2) : [];
    try {
      const nodes = engine === "postgres" ? [repos, ...extra.map((h) => createPgRepos(h) as Repos)] : [repos, repos, repos];
      const claimedBy = nodes.map(() => [] as string[]);
      // Each node's pool connected before the race: a node still connecting would let the others
      // claim everything, and the check that the claims interleaved would say nothing.
      await Promise.all(nodes.map((r) => r.webhooks.getEndpoint(endpoints[0]!.id)));
      // A node keeps claiming until every delivery is claimed: an empty claim may only mean that
      // another node took the rows it picked, so it must not end that node's share of the race.
      let total = 0;
      await Promise.all(
        nodes.map(async (r, i) => {
          for (let round = 0; total < rows.length && round < 200; round++) {
            const got = await claim({ now: at(100), limit: 4, leaseUntil: at(5 * MIN), perEndpoint: 2 }, r);
            total += got.length;
            claimedBy[i]!.push(...got.map((d) => d.id));
          }
        }),
      );
      const all = claimedBy.flat();
      expect(all.length).toBe(rows.length);
      expect(new Set(all).size).toBe(rows.length);
      if (engine === "postgres") expect(claimedBy.filter((ids) => ids.length > 0).length).toBeGreaterThan(1);
    } finally {
      for (const h of extra) await h.close();
    }
  });
});
