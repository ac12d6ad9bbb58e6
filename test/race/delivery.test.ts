// Three Keyward processes with jobs on, one database: every node runs the delivery worker, and each
// message still leaves once (the per-message claims, not the job lease, keep the nodes apart). Events
// fan out and reach a real receiver, emails a real SMTP server, a receiver that fails twice gets its
// three attempts within 10 s with one webhook-id (WEBHOOK_RETRY_BASE_SECONDS=1). On SQLite (one file)
// and on PostgreSQL (TEST_DATABASE_URL; wake-ups by LISTEN/NOTIFY across the nodes).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engines } from "../contract/harness";
import { startCluster, type Cluster } from "./cluster";
import { pgbouncerPath } from "../support/pgbouncer";
import type { Engine } from "../../src/db/store";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver";
import { startSmtpServer, type TestSmtpServer } from "../support/smtp";
import { makeCatalog, makeLicense } from "../support/factories";
import { sealedEmail } from "../../src/modules/email/outbox";
import { emailMessage } from "../../src/modules/outbox/effects";
import { SECOND } from "../../src/shared/clock";

const NODES = 3;
// Below half of DISABLE_AFTER_CONSECUTIVE_FAILURES: the flaky endpoint fails twice per event and must stay enabled.
const EVENTS = 8;
const EMAILS = 20;

/** The nodes' warnings and errors, for a failure's message. */
const problems = (c: Cluster | undefined) =>
  (c?.nodes ?? [])
    .flatMap((n, i) => `${n.output().stdout}\n${n.output().stderr}`.split("\n").filter((l) => /"level":"(warn|error)"|error|not sent/i.test(l)).map((l) => `node ${i}: ${l.length > 900 ? `${l.slice(0, 300)} … ${l.slice(-600)}` : l}`))
    .join("\n");

async function until(what: string | (() => string), ok: () => boolean, ms = 20 * SECOND, c?: Cluster): Promise<void> {
  const start = performance.now();
  while (!ok()) {
    if (performance.now() - start > ms) throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}\n${problems(c)}`);
    await Bun.sleep(20);
  }
}

// Behind PgBouncer in transaction mode LISTEN does not reach the nodes: the once-a-second poll must
// still deliver everything, once.
const setups: { engine: Engine; pooler: boolean }[] = [
  ...engines().map((engine) => ({ engine, pooler: false })),
  // Opt-in for now (KEYWARD_TEST_POOLER_DELIVERY=1). Under load (other test suites on the 2 cores:
  // load average 6) about one run in three fails: a statement a node sends through PgBouncer gets
  // no answer until the stall watchdog fails it after DATABASE_STALL_TIMEOUT_MS (CONNECTION_STALLED,
  // now recorded as the message's last_error), while pg_stat_activity shows every server connection
  // idle; with a 40-connection pool instead of 10 it fails as often. A fan-out that failed so is
  // retried (this test's events are a week old and are given up instead), and a delivery whose
  // statement stalled after its claim waits out the 2-minute claim, past this test's 20 s. Where the
  // answer is lost (PgBouncer or the driver) is not found yet.
  ...(engines().includes("postgres") && pgbouncerPath() && process.env.KEYWARD_TEST_POOLER_DELIVERY === "1" ? [{ engine: "postgres" as const, pooler: true }] : []),
];

for (const { engine, pooler } of setups) {
  describe(`delivery on ${NODES} nodes on ${engine}${pooler ? " behind PgBouncer (transaction mode)" : ""}`, () => {
    let c: Cluster;
    let r: WebhookReceiver;
    let smtp: TestSmtpServer;
    beforeAll(async () => {
      r = startWebhookReceiver();
      smtp = await startSmtpServer();
      c = await startCluster(engine, NODES, {
        JOBS: "true",
        WEBHOOK_ALLOW_PRIVATE: "true",
        WEBHOOK_RETRY_BASE_SECONDS: "1",
        SMTP_URL: smtp.url,
        MAIL_FROM: "noreply@acme.example",
      }, { pooler });
    }, 60_000);
    afterAll(async () => {
      await c?.close();
      await r?.stop();
      await smtp?.stop();
    });

    test("each event, retry and email is delivered once, and promptly", async () => {
      // Each delivery (webhook-id) is refused twice, then accepted.
      const attemptsOf = (id: string) => r.at("/flaky").filter((h) => h.id === id).length;
      const firstAt = new Map<string, number>();
      const thirdAt = new Map<string, number>();
      r.on("/flaky", (h) => {
        const n = attemptsOf(h.id);
        if (n === 1) firstAt.set(h.id, performance.now());
        if (n === 3) thirdAt.set(h.id, performance.now());
        return n <= 2 ? new Response("not yet", { status: 503 }) : new Response("ok");
      });
      const create = async (url: string, events: string[]) => {
        const res = await fetch(`${c.url(0)}/api/v1/admin/webhooks`, {
          method: "POST",
          headers: { authorization: `Bearer ${c.t.adminKey}`, "content-type": "application/json" },
          body: JSON.stringify({ url, events }),
        });
        expect(res.status).toBe(201);
      };
      await create(r.url("/all"), ["license.created"]);
      await create(r.url("/flaky"), ["license.created"]);

      // Written by the inspecting app, which runs no worker: only the nodes deliver.
      const { product, plan } = await makeCatalog(c.t.deps);
      const since = performance.now();
      for (let i = 1; i < EVENTS; i++) await makeLicense(c.t.deps, { productId: product.id, planId: plan.id });
      // Sign-in codes go to addresses that may sign in only (a user here); others are dropped at delivery.
      // Written at the real time, not the inspecting app's fixed clock (a week ago): a message older
      // than 3 days is given up at its first failure, and a transient one (a statement through the
      // pooler failing under load) must be retried here as it would be in production.
      for (let i = 0; i < EMAILS; i++) await c.t.deps.repos.users.ensure(`user${i}@example.com`, c.t.clock.now());
      for (let i = 0; i < EMAILS; i++) {
        await c.t.deps.repos.outbox.enqueue(
          emailMessage(sealedEmail(c.t.deps.secrets, { template: "sign_in_code", to: `user${i}@example.com`, at: new Date(), data: { ttl_minutes: 10 }, secret: { code: String(100000 + i) } })),
        );
      }
      await until("every event at /all", () => r.at("/all").length >= EVENTS, undefined, c);
      try {
        await until(() => `every email (${smtp.received.length} of ${EMAILS})`, () => smtp.received.length >= EMAILS, undefined, c);
      } catch (e) {
        const rows = (await c.t.deps.repos.outbox.listEmails({ limit: 100 } as never)).items.map((m) => ({ id: m.id, status: m.status, attempts: m.attempts, next: m.nextAttemptAt, err: m.lastError }));
        throw new Error(`${(e as Error).message}\n${JSON.stringify(rows.filter((r) => r.status !== "sent"))}`);
      }
      // The flaky receiver: every delivery's three attempts (two 503s, then 200).
      await until("three attempts of every flaky delivery", () => new Set(r.at("/flaky").filter((h) => attemptsOf(h.id) >= 3).map((h) => h.id)).size >= EVENTS, undefined, c);
      const elapsed = performance.now() - since;

      // A moment more for any duplicate to show up.
      await Bun.sleep(2 * SECOND);
      const ids = r.at("/all").map((h) => h.id);
      expect(ids.length).toBe(EVENTS);
      expect(new Set(ids).size).toBe(EVENTS);
      const flaky = new Map<string, number>();
      for (const h of r.at("/flaky")) flaky.set(h.id, (flaky.get(h.id) ?? 0) + 1);
      expect(flaky.size).toBe(EVENTS);
      expect([...flaky.values()].every((n) => n === 3)).toBe(true);
      for (const [id, first] of firstAt) expect(thirdAt.get(id)! - first).toBeLessThanOrEqual(10 * SECOND);
      expect(smtp.received.map((m) => m.envelope.to[0]).sort()).toEqual(Array.from({ length: EMAILS }, (_, i) => `user${i}@example.com`).sort());
      expect(elapsed).toBeLessThanOrEqual(15 * SECOND);
    }, 90_000);
  });
}
