// The outbox delivery loop (deliver-outbox) on every engine, with a test handler registered.
import { afterEach, expect, test } from "bun:test";
import type { Repos } from "../../src/deps";
import type { OutboxMessage } from "../../src/modules/outbox/repo";
import { deliverOutbox } from "../../src/modules/outbox/service";
import type { OutboxHandlers } from "../../src/modules/outbox/handlers";
import { DAY, fixedClock, SECOND } from "../../src/shared/clock";
import { forEachEngine, type Opened } from "../contract/harness";
import { repoFor } from "../contract/repos";
import { insertRows } from "../contract/seed";
import { newId } from "../../src/shared/ids";
import { newDelivery } from "../../src/modules/webhooks/handler";
import { jobDeps, nodeRepos } from "./nodes";

const T0 = "2026-11-21T08:00:00.000Z";
const half = () => 0.5;

forEachEngine("outbox delivery", (engine, open) => {
  let o: Opened;
  let repos: Repos;
  const setup = async () => {
    o = await open();
    repos = repoFor(o);
  };
  afterEach(() => o?.close());

  test("delivers due messages of kinds with a handler, marks them sent; other kinds stay pending untouched", async () => {
    await setup();
    const clock = fixedClock(T0);
    const seen: OutboxMessage[] = [];
    const deps = jobDeps(repos, clock, { outboxHandlers: { event: async (m) => void seen.push(m) } });
    const events = [];
    for (let i = 0; i < 3; i++) events.push(await repos.outbox.enqueue({ kind: "event", topic: `t${i}`, payload: { i }, at: clock.now() }));
    const email = await repos.outbox.enqueue({ kind: "email", topic: "invite", payload: { to: "x@example.com" }, at: clock.now() });
    clock.advance(SECOND);

    expect(await deliverOutbox(deps, { random: half })).toEqual({ claimed: 3, sent: 3, logged: 0, retried: 0, gave_up: 0, lost: 0 });
    expect(seen.map((m) => [m.topic, m.payload])).toEqual([
      ["t0", { i: 0 }],
      ["t1", { i: 1 }],
      ["t2", { i: 2 }],
    ]);
    for (const e of events) expect(await repos.outbox.get(e.id)).toMatchObject({ status: "sent", sentAt: clock.now(), attempts: 0 });
    expect(await repos.outbox.get(email.id)).toEqual(email);
    // Nothing left to do; with no handler at all nothing is even claimed.
    expect(await deliverOutbox(deps)).toEqual({ claimed: 0, sent: 0, logged: 0, retried: 0, gave_up: 0, lost: 0 });
    expect(await deliverOutbox(jobDeps(repos, clock))).toEqual({ claimed: 0, sent: 0, logged: 0, retried: 0, gave_up: 0, lost: 0 });
    expect(await repos.outbox.get(email.id)).toEqual(email);
  });

  test("a failure is retried after the backoff (base 30 s, full jitter), then delivered", async () => {
    await setup();
    const clock = fixedClock(T0);
    let failuresLeft = 2;
    const handlers: OutboxHandlers = {
      event: async () => {
        if (failuresLeft-- > 0) throw new Error(`HTTP 503 (${failuresLeft})`);
      },
    };
    const deps = jobDeps(repos, clock, { outboxHandlers: handlers });
    expect(deps.config.webhookRetryBaseSeconds).toBe(30);
    const m = await repos.outbox.enqueue({ kind: "event", topic: "license.revoked", payload: {}, at: clock.now() });

    expect(await deliverOutbox(deps, { random: half })).toEqual({ claimed: 1, sent: 0, logged: 0, retried: 1, gave_up: 0, lost: 0 });
    // First failure: up to 30 s; the draw 0.5 gives 15 s.
    expect(await repos.outbox.get(m.id)).toMatchObject({ status: "pending", attempts: 1, lastError: "HTTP 503 (1)", nextAttemptAt: new Date(Date.parse(T0) + 15 * SECOND) });
    clock.advance(15 * SECOND - 1);
    expect((await deliverOutbox(deps, { random: half })).claimed).toBe(0);
    clock.advance(1);
    expect(await deliverOutbox(deps, { random: half })).toEqual({ claimed: 1, sent: 0, logged: 0, retried: 1, gave_up: 0, lost: 0 });
    // Second failure: up to 60 s → 30 s.
    expect(await repos.outbox.get(m.id)).toMatchObject({ attempts: 2, lastError: "HTTP 503 (0)", nextAttemptAt: new Date(Date.parse(T0) + 45 * SECOND) });
    clock.advance(30 * SECOND);
    expect(await deliverOutbox(deps, { random: half })).toEqual({ claimed: 1, sent: 1, logged: 0, retried: 0, gave_up: 0, lost: 0 });
    expect(await repos.outbox.get(m.id)).toMatchObject({ status: "sent", attempts: 2, sentAt: clock.now() });
  });

  test("a handler's failed statement is recorded by its driver's reason, not drizzle's message with the statement's parameter values", async () => {
    await setup();
    const clock = fixedClock(T0);
    // A delivery for an endpoint that does not exist: the insert fails on its foreign key.
    const deps = jobDeps(repos, clock, {
      outboxHandlers: {
        event: async (m) => {
          await repos.webhooks.addDeliveries([newDelivery({ endpointId: newId(), eventId: m.id, eventType: "license.created", body: "body-value-kept-out-of-logs", at: clock.now() })]);
        },
      },
    });
    const m = await repos.outbox.enqueue({ kind: "event", topic: "license.created", payload: {}, at: clock.now() });
    expect(await deliverOutbox(deps, { random: half })).toMatchObject({ claimed: 1, retried: 1 });
    const { lastError } = (await repos.outbox.get(m.id))!;
    expect(lastError).not.toContain("body-value-kept-out-of-logs");
    expect(lastError).not.toMatch(/insert into|params:/i);
    expect(lastError).toMatch(engine === "sqlite" ? /FOREIGN KEY constraint failed \(SQLITE_CONSTRAINT_FOREIGNKEY\)/ : /foreign key constraint .*\(23503\)/);
  });

  test("a message still failing 3 days after it was written is given up", async () => {
    await setup();
    const clock = fixedClock(T0);
    const deps = jobDeps(repos, clock, {
      outboxHandlers: {
        event: async () => {
          throw new Error("connection refused");
        },
      },
    });
    const old = {
      id: newId(),
      kind: "event",
      topic: "old",
      payload: {},
      status: "pending",
      attempts: 17,
      nextAttemptAt: clock.now(),
      lastError: "connection refused",
      createdAt: new Date(clock.nowMs() - 3 * DAY),
      sentAt: null,
    };
    const young = { ...old, id: newId(), topic: "young", createdAt: new Date(clock.nowMs() - 3 * DAY + 1) };
    await insertRows(o, "outbox", [old, young]);
    expect(await deliverOutbox(deps, { random: half })).toEqual({ claimed: 2, sent: 0, logged: 0, retried: 1, gave_up: 1, lost: 0 });
    expect(await repos.outbox.get(old.id)).toMatchObject({ status: "failed", attempts: 18, lastError: "connection refused" });
    expect(await repos.outbox.get(young.id)).toMatchObject({ status: "pending", attempts: 18 });
    // A failed message is never claimed again.
    clock.advance(7 * DAY);
    expect(await deliverOutbox(deps, { random: half })).toEqual({ claimed: 1, sent: 0, logged: 0, retried: 0, gave_up: 1, lost: 0 });
    expect(await repos.outbox.get(old.id)).toMatchObject({ status: "failed", attempts: 18 });
  });

  test("two nodes delivering concurrently never deliver one message twice", async () => {
    await setup();
    const nodes = await nodeRepos(o, 2);
    try {
      const clock = fixedClock(T0);
      const deliveries = new Map<string, number>();
      const byNode = [0, 0];
      const handler = (node: number) => async (m: OutboxMessage) => {
        await Bun.sleep(2);
        deliveries.set(m.id, (deliveries.get(m.id) ?? 0) + 1);
        byNode[node]! += 1;
      };
      const ids: string[] = [];
      for (let i = 0; i < 60; i++) ids.push((await repos.outbox.enqueue({ kind: "event", topic: "t", payload: { i }, at: clock.now() })).id);
      const results = await Promise.all(
        nodes.repos.map((r, i) => deliverOutbox(jobDeps(r, clock, { outboxHandlers: { event: handler(i) } }), { batchSize: 5, random: half })),
      );
      expect(results.reduce((n, r) => n + r.sent, 0)).toBe(60);
      expect([...deliveries.values()].every((n) => n === 1)).toBe(true);
      expect([...deliveries.keys()].sort()).toEqual([...ids].sort());
      // Both nodes took part (the handlers' awaits let the claims interleave).
      expect(byNode.every((n) => n > 0)).toBe(true);
      for (const id of ids) expect((await repos.outbox.get(id))!.status).toBe("sent");
    } finally {
      await nodes.close();
    }
  });
});
