// Outgoing webhooks end to end: events written by real changes fan out to the endpoints that want
// them, and the deliver-webhooks pass POSTs them to a local receiver (Bun.serve on 127.0.0.1, so
// these apps run with WEBHOOK_ALLOW_PRIVATE=true). Signatures are checked with the standardwebhooks
// library (v1) and node:crypto (v1a). Passes run through POST /admin/system/jobs/{name}/run (JOBS is
// off under NODE_ENV=test), or deliverWebhooks() where a test needs short timeouts.
// SQLite, and PostgreSQL with KEYWARD_TEST_ENGINE=postgres.
import { afterEach, describe, expect, test } from "bun:test";
import { createHmac, createPublicKey, verify } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { createTestApp, type TestApp } from "../../support/app";
import { startWebhookReceiver, type ReceivedHook, type WebhookReceiver } from "../../support/webhook-receiver";
import { startSmtpServer } from "../../support/smtp";
import { makeCatalog, makeLicense, makePlan, makeProduct } from "../../support/factories";
import { fixedClock, HOUR, SECOND } from "../../../src/shared/clock";
import { deliverWebhooks } from "../../../src/modules/webhooks/deliver";
import { DISABLE_AFTER_CONSECUTIVE_FAILURES } from "../../../src/modules/webhooks/domain";
import { EVENT_SCHEMAS } from "../../../src/modules/outbox/event-schemas";
import { startScheduler } from "../../../src/jobs/scheduler";
import type { CronScheduler } from "../../../src/jobs/cron";

const V1 = "/api/v1";
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function setup(env: Record<string, string> = {}) {
  // The real time: receivers (and the standardwebhooks library) check webhook-timestamp against it.
  const t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: "true", ...env }, clock: fixedClock(Date.now()) });
  cleanup.push(() => t.close());
  const r = startWebhookReceiver();
  cleanup.push(() => r.stop());
  return { t, r };
}

async function run(t: TestApp, name: "deliver-outbox" | "deliver-webhooks") {
  const res = await t.request("POST", `${V1}/admin/system/jobs/${name}/run`);
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({ status: "ok", error: null });
  return res.body.data.result as Record<string, number>;
}
/** Fan out what the outbox holds, then send what is due. */
async function deliver(t: TestApp) {
  await run(t, "deliver-outbox");
  return await run(t, "deliver-webhooks");
}

async function endpoint(t: TestApp, body: Record<string, unknown>) {
  const res = await t.request("POST", `${V1}/admin/webhooks`, { body });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; secret: string; ed25519_public_key: string | null } & Record<string, unknown>;
}
async function getEndpoint(t: TestApp, id: string) {
  const res = await t.request("GET", `${V1}/admin/webhooks/${id}`);
  expect(res.status).toBe(200);
  return res.body.data;
}
async function deliveries(t: TestApp, endpointId: string, query = "") {
  const res = await t.request("GET", `${V1}/admin/webhooks/${endpointId}/deliveries${query}`);
  expect(res.status).toBe(200);
  return res.body.data.items as Record<string, any>[];
}

const headersOf = (h: ReceivedHook) => ({ "webhook-id": h.id, "webhook-timestamp": h.timestamp, "webhook-signature": h.signature });
const v1Signatures = (h: ReceivedHook) => h.signature.split(" ").filter((s) => s.startsWith("v1,"));

/** Verifies the v1a signature with node:crypto against the endpoint's whpk_ public key. */
function verifyV1a(h: ReceivedHook, publicKey: string): boolean {
  const sig = h.signature.split(" ").find((s) => s.startsWith("v1a,"));
  if (!sig) return false;
  const raw = Buffer.from(publicKey.slice("whpk_".length), "base64");
  const key = createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), raw]), format: "der", type: "spki" });
  return verify(null, Buffer.from(`${h.id}.${h.timestamp}.${h.body}`), key, Buffer.from(sig.slice(4), "base64"));
}

describe("webhook delivery", () => {
  test("an event reaches the endpoints that want it, signed (v1 verified by standardwebhooks, v1a by node:crypto)", async () => {
    const { t, r } = await setup();
    const product = await makeProduct(t.deps);
    const other = await makeProduct(t.deps);
    const plan = await makePlan(t.deps, product.id);
    const all = await endpoint(t, { url: r.url("/all"), events: ["license.*"], ed25519: true, description: "CRM" });
    const scoped = await endpoint(t, { url: r.url("/scoped"), events: ["license.created"], product_id: product.id });
    await endpoint(t, { url: r.url("/releases"), events: ["release.*"] });
    await endpoint(t, { url: r.url("/other-product"), events: ["*"], product_id: other.id });
    await endpoint(t, { url: r.url("/disabled"), events: ["*"], enabled: false });

    const { license } = await makeLicense(t.deps, { productId: product.id, planId: plan.id });
    expect(await deliver(t)).toMatchObject({ claimed: 2, delivered: 2, retried: 0, failed: 0, lost: 0 });

    expect(r.received.map((h) => h.path).sort()).toEqual(["/all", "/scoped"]);
    const [hook] = r.at("/all");
    const body = new Webhook(all.secret).verify(hook!.body, headersOf(hook!)) as Record<string, any>;
    expect(body).toEqual({
      type: "license.created",
      timestamp: expect.any(String),
      data: expect.objectContaining({ license_id: license.id, product_id: product.id, status: "active" }),
    });
    expect(Object.keys(JSON.parse(hook!.body))).toEqual(["type", "timestamp", "data"]);
    expect(hook!.headers["content-type"]).toBe("application/json");
    expect(all.ed25519_public_key).toStartWith("whpk_");
    expect(verifyV1a(hook!, all.ed25519_public_key!)).toBe(true);
    // The other endpoint's secret does not verify it; a tampered body does not verify.
    expect(() => new Webhook(scoped.secret).verify(hook!.body, headersOf(hook!))).toThrow();
    expect(() => new Webhook(all.secret).verify(hook!.body.replace("active", "revoked"), headersOf(hook!))).toThrow();
    // Without an Ed25519 key only v1 is sent.
    const [plain] = r.at("/scoped");
    expect(plain!.signature.split(" ")).toHaveLength(1);
    expect(new Webhook(scoped.secret).verify(plain!.body, headersOf(plain!))).toMatchObject({ type: "license.created" });

    const [logged] = await deliveries(t, all.id);
    expect(logged).toMatchObject({
      id: hook!.id,
      event_type: "license.created",
      status: "delivered",
      attempts: 1,
      last_response_code: 200,
      last_response_body: "ok",
      last_error: null,
      next_attempt_at: null,
      payload: body,
    });
    expect(logged!.last_latency_ms).toBeGreaterThanOrEqual(0);
    // The event itself is in the event log.
    const events = (await t.request("GET", `${V1}/admin/events?type=license.*&product_id=${product.id}`)).body.data.items;
    expect(events.map((e: { id: string }) => e.id)).toEqual([logged!.event_id]);
  });

  test("a receiver failing twice then succeeding gets the same webhook-id three times; the delivery ends delivered", async () => {
    const { t, r } = await setup();
    r.on("/flaky", (_h, n) => (n <= 2 ? new Response("try later", { status: n === 1 ? 500 : 503 }) : new Response("thanks")));
    const e = await endpoint(t, { url: r.url("/flaky"), events: ["license.created"] });
    await makeCatalog(t.deps);
    expect(await deliver(t)).toMatchObject({ claimed: 1, retried: 1 });
    let [d] = await deliveries(t, e.id);
    expect(d).toMatchObject({ status: "pending", attempts: 1, last_response_code: 500, last_response_body: "try later", last_error: "HTTP 500" });
    expect((await getEndpoint(t, e.id)).consecutive_failures).toBe(1);
    // Not due before its backoff ends: a pass now sends nothing.
    expect(await run(t, "deliver-webhooks")).toMatchObject({ claimed: 0 });
    t.clock.advance(7 * HOUR); // past the longest first or second wait
    expect(await run(t, "deliver-webhooks")).toMatchObject({ claimed: 1, retried: 1 });
    t.clock.advance(7 * HOUR);
    expect(await run(t, "deliver-webhooks")).toMatchObject({ claimed: 1, delivered: 1 });

    const hooks = r.at("/flaky");
    expect(hooks).toHaveLength(3);
    expect(new Set(hooks.map((h) => h.id)).size).toBe(1);
    expect(hooks.map((h) => h.body)).toEqual([hooks[0]!.body, hooks[0]!.body, hooks[0]!.body]);
    // Each attempt is signed for its own timestamp.
    expect(new Set(hooks.map((h) => h.timestamp)).size).toBe(3);
    [d] = await deliveries(t, e.id);
    expect(d).toMatchObject({ id: hooks[0]!.id, status: "delivered", attempts: 3, last_response_code: 200, last_error: null });
    expect((await getEndpoint(t, e.id)).consecutive_failures).toBe(0);
  });

  test("410 Gone disables the endpoint at once; later events are not queued for it", async () => {
    const { t, r } = await setup();
    r.on("/gone", () => new Response("unsubscribed", { status: 410 }));
    const e = await endpoint(t, { url: r.url("/gone"), events: ["*"] });
    const { product, plan } = await makeCatalog(t.deps);
    expect(await deliver(t)).toMatchObject({ claimed: 1, failed: 1, disabled: 1 });
    expect(await getEndpoint(t, e.id)).toMatchObject({ enabled: false, disabled_reason: "gone", disabled_at: expect.any(String) });
    expect((await deliveries(t, e.id))[0]).toMatchObject({ status: "failed", attempts: 1, last_response_code: 410 });

    await makeLicense(t.deps, { productId: product.id, planId: plan.id });
    await deliver(t);
    expect(r.at("/gone")).toHaveLength(1);
    expect(await deliveries(t, e.id)).toHaveLength(1);
    const audit = (await t.request("GET", `${V1}/admin/audit?entity_type=webhook_endpoint`)).body.data.items;
    expect(audit.map((a: { action: string }) => a.action)).toContain("webhook.auto_disable");
  });

  test("redirects are not followed: a 3xx is a failure and the target of the redirect gets nothing", async () => {
    const { t, r } = await setup();
    r.on("/moved", () => new Response(null, { status: 302, headers: { location: r.url("/elsewhere") } }));
    const e = await endpoint(t, { url: r.url("/moved"), events: ["*"] });
    await makeCatalog(t.deps);
    expect(await deliver(t)).toMatchObject({ retried: 1 });
    expect(r.at("/elsewhere")).toHaveLength(0);
    expect((await deliveries(t, e.id))[0]).toMatchObject({ status: "pending", last_response_code: 302, last_error: "HTTP 302: redirects are not followed" });
  });

  test("a receiver that never answers does not delay another endpoint's delivery", async () => {
    const { t, r } = await setup();
    // The slow receiver holds its request open until the sender gives up (its timeout closes it).
    let slowOpen = false;
    r.on("/slow", (_h, _n, req) => {
      slowOpen = true;
      return new Promise<Response>((resolve) => req.signal.addEventListener("abort", () => ((slowOpen = false), resolve(new Response("late")))));
    });
    /** At the fast request's arrival: was the slow one still hanging (or not even sent yet)? */
    let fastDuringSlow = null as boolean | null;
    r.on("/fast", () => {
      fastDuringSlow = slowOpen || r.at("/slow").length === 0;
      return new Response("ok");
    });
    const slow = await endpoint(t, { url: r.url("/slow"), events: ["*"] });
    const fast = await endpoint(t, { url: r.url("/fast"), events: ["*"] });
    await makeCatalog(t.deps);
    await run(t, "deliver-outbox");
    // Short timeouts so the test does not wait 15 s for the hung request.
    const counts = await deliverWebhooks(t.deps, { connectTimeoutMs: 2 * SECOND, totalTimeoutMs: 3 * SECOND });
    expect(fastDuringSlow).toBe(true);
    expect(counts).toMatchObject({ claimed: 2, delivered: 1, retried: 1 });
    expect((await deliveries(t, fast.id))[0]).toMatchObject({ status: "delivered", last_response_code: 200 });
    const [hung] = await deliveries(t, slow.id);
    expect(hung).toMatchObject({ status: "pending", attempts: 1, last_response_code: null });
    expect(hung!.last_error).toContain("timeout");
  });

  test("a body's keys come in the documented order on either engine: type, timestamp, data, and data in its schema's order", async () => {
    const { t, r } = await setup();
    await endpoint(t, { url: r.url("/order"), events: ["*"] });
    const { key } = await makeCatalog(t.deps);
    expect((await t.request("POST", `${V1}/license/activate`, { body: { license_key: key, identifier: "device-1" }, key: null })).status).toBe(200);
    await deliver(t);
    const bodies = r.at("/order").map((h) => h.body);
    expect(bodies.map((b) => JSON.parse(b).type).sort()).toEqual(["activation.created", "license.created"]);
    for (const body of bodies) {
      // JSON.parse keeps the order of the text: the order the receiver got.
      const parsed = JSON.parse(body) as { type: keyof typeof EVENT_SCHEMAS; data: Record<string, unknown> };
      expect(Object.keys(parsed)).toEqual(["type", "timestamp", "data"]);
      expect(Object.keys(parsed.data)).toEqual(Object.keys(EVENT_SCHEMAS[parsed.type].properties));
    }
  });

  test("a hung request holds only its own slot: more due deliveries are claimed and sent meanwhile", async () => {
    const { t, r } = await setup();
    let slow: "not yet" | "hung" | "ended" = "not yet";
    r.on("/slow", (_h, _n, req) => {
      slow = "hung";
      return new Promise<Response>((resolve) => req.signal.addEventListener("abort", () => ((slow = "ended"), resolve(new Response("late")))));
    });
    // What the slow request was doing when each other delivery arrived.
    const slowWhenSent: string[] = [];
    for (const path of ["/a", "/b", "/c"]) r.on(path, () => (slowWhenSent.push(slow), new Response("ok")));
    await endpoint(t, { url: r.url("/slow"), events: ["*"] });
    for (const path of ["/a", "/b", "/c"]) await endpoint(t, { url: r.url(path), events: ["*"] });
    await makeCatalog(t.deps);
    await run(t, "deliver-outbox");
    // Two slots: the hung request keeps one; the three others pass through the other, one by one.
    const counts = await deliverWebhooks(t.deps, { concurrency: 2, connectTimeoutMs: 2 * SECOND, totalTimeoutMs: 3 * SECOND });
    expect(counts).toMatchObject({ claimed: 4, delivered: 3, retried: 1 });
    // The slow one is claimed first, beside "/a": which of those two reaches the receiver first is a
    // race, so "/a" may arrive before it hangs. "/b" and "/c" then go through the other slot while it
    // hangs, and nothing waits for it to end.
    expect(slowWhenSent).toHaveLength(3);
    expect(slowWhenSent.slice(1)).toEqual(["hung", "hung"]);
    expect(slowWhenSent).not.toContain("ended");
  });

  test("secret rotation: both secrets sign for 24 hours, then only the new one", async () => {
    const { t, r } = await setup();
    const e = await endpoint(t, { url: r.url("/rot"), events: ["*"] });
    const rotated = await t.request("POST", `${V1}/admin/webhooks/${e.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.data.secret as string;
    expect(fresh).toStartWith("whsec_");
    expect(fresh).not.toBe(e.secret);
    expect(rotated.body.data.previous_secret_expires_at).toBe(new Date(t.clock.nowMs() + 24 * HOUR).toISOString());
    // GET never shows a secret.
    expect(JSON.stringify(await getEndpoint(t, e.id))).not.toContain("whsec_");

    const { product, plan } = await makeCatalog(t.deps);
    await deliver(t);
    const [during] = r.at("/rot");
    expect(v1Signatures(during!)).toHaveLength(2);
    expect(new Webhook(e.secret).verify(during!.body, headersOf(during!))).toMatchObject({ type: "license.created" });
    expect(new Webhook(fresh).verify(during!.body, headersOf(during!))).toMatchObject({ type: "license.created" });

    t.clock.advance(24 * HOUR + SECOND);
    await makeLicense(t.deps, { productId: product.id, planId: plan.id });
    await deliver(t);
    const after = r.at("/rot")[1]!;
    const expected = (secret: string) =>
      `v1,${createHmac("sha256", Buffer.from(secret.slice(6), "base64")).update(`${after.id}.${after.timestamp}.${after.body}`).digest("base64")}`;
    expect(after.signature).toBe(expected(fresh));
    expect(after.signature).not.toContain(expected(e.secret).slice(3));
    expect((await getEndpoint(t, e.id)).previous_secret_expires_at).toBeNull();
  });

  test("redeliver sends a delivery again with the same webhook-id; test events go to one endpoint whatever its filters", async () => {
    const { t, r } = await setup();
    const e = await endpoint(t, { url: r.url("/one"), events: ["release.published"] });
    await endpoint(t, { url: r.url("/two"), events: ["*"] });
    const queued = await t.request("POST", `${V1}/admin/webhooks/${e.id}/test`);
    expect(queued.status).toBe(202);
    expect(queued.body.data).toMatchObject({ event_type: "webhook.test", status: "pending", attempts: 0, event_id: null });
    expect(await run(t, "deliver-webhooks")).toMatchObject({ claimed: 1, delivered: 1 });
    expect(r.at("/two")).toHaveLength(0);
    const [first] = r.at("/one");
    expect(new Webhook(e.secret).verify(first!.body, headersOf(first!))).toMatchObject({ type: "webhook.test", data: { endpoint_id: e.id } });
    expect(first!.id).toBe(queued.body.data.id);

    const again = await t.request("POST", `${V1}/admin/webhooks/deliveries/${first!.id}/redeliver`);
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ id: first!.id, status: "pending", attempts: 1 });
    await run(t, "deliver-webhooks");
    const hooks = r.at("/one");
    expect(hooks).toHaveLength(2);
    expect(hooks[1]!.id).toBe(first!.id);
    expect(hooks[1]!.body).toBe(first!.body);
    expect((await deliveries(t, e.id))[0]).toMatchObject({ status: "delivered", attempts: 2 });

    // A disabled endpoint takes neither.
    expect((await t.request("POST", `${V1}/admin/webhooks/${e.id}/disable`)).body.data).toMatchObject({ enabled: false, disabled_reason: "manual" });
    for (const path of [`/admin/webhooks/${e.id}/test`, `/admin/webhooks/deliveries/${first!.id}/redeliver`]) {
      const res = await t.request("POST", `${V1}${path}`);
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe("WEBHOOK_DISABLED");
    }
  });

  test(`after ${DISABLE_AFTER_CONSECUTIVE_FAILURES} failures in a row the endpoint is disabled and the admins get an email, once`, async () => {
    const smtp = await startSmtpServer();
    cleanup.push(() => smtp.stop());
    const { t, r } = await setup({ SMTP_URL: smtp.url, MAIL_FROM: "Keyward <noreply@acme.example>", ADMIN_EMAILS: "ops@acme.example" });
    await t.signIn("second-admin@acme.example", { role: "admin" });
    await t.signIn("support@acme.example", { role: "support" });
    r.on("/broken", () => new Response("boom", { status: 500 }));
    const e = await endpoint(t, { url: r.url("/broken"), events: ["*"], description: "Billing sync" });
    await makeCatalog(t.deps);
    await deliver(t);
    expect((await getEndpoint(t, e.id))).toMatchObject({ enabled: true, consecutive_failures: 1 });
    // Fast-forward to one failure short of the threshold.
    await t.exec("UPDATE webhook_endpoints SET consecutive_failures = $1 WHERE id = $2", [DISABLE_AFTER_CONSECUTIVE_FAILURES - 1, e.id]);
    t.clock.advance(7 * HOUR);
    expect(await run(t, "deliver-webhooks")).toMatchObject({ claimed: 1, retried: 1, disabled: 1 });
    expect(await getEndpoint(t, e.id)).toMatchObject({ enabled: false, disabled_reason: "failures", consecutive_failures: DISABLE_AFTER_CONSECUTIVE_FAILURES });

    await run(t, "deliver-outbox");
    await run(t, "deliver-outbox");
    const mails = smtp.received.filter((m) => m.subject.startsWith("Webhook endpoint disabled"));
    expect(mails.map((m) => m.to).sort()).toEqual(["ops@acme.example", "second-admin@acme.example"]);
    const host = new URL(r.url("/")).host;
    expect(mails[0]!.subject).toBe(`Webhook endpoint disabled: ${host}`);
    expect(mails[0]!.text).toContain(`Keyward stopped sending webhooks to ${host} (Billing sync).`);
    expect(mails[0]!.text).toContain(`The last ${DISABLE_AFTER_CONSECUTIVE_FAILURES} delivery attempts in a row failed.`);
    expect(mails[0]!.text).toContain(`POST /api/v1/admin/webhooks/${e.id}/enable`);
    expect(mails[0]!.html).toContain("Webhook endpoint disabled");
    // The path of the URL (it may carry the receiver's token) is not in the email.
    expect(mails[0]!.text).not.toContain("/broken");

    // Disabled: its pending delivery waits. Enabling clears the count and sends it again.
    t.clock.advance(7 * HOUR);
    expect(await run(t, "deliver-webhooks")).toMatchObject({ claimed: 0 });
    r.on("/broken", () => new Response("fixed"));
    expect((await t.request("POST", `${V1}/admin/webhooks/${e.id}/enable`)).body.data).toMatchObject({ enabled: true, consecutive_failures: 0, disabled_reason: null });
    expect(await run(t, "deliver-webhooks")).toMatchObject({ claimed: 1, delivered: 1 });
  });
});

test("with the delivery worker running, a test event is delivered at once, with no pass and no job run", async () => {
  const { t, r } = await setup();
  // Cron never fires in this test: only the worker can deliver.
  const cron: CronScheduler = () => ({ stop: () => {} });
  const scheduler = startScheduler(t.deps, { cron });
  try {
    const e = await endpoint(t, { url: r.url("/nudged"), events: ["*"] });
    expect((await t.request("POST", `${V1}/admin/webhooks/${e.id}/test`)).status).toBe(202);
    await r.waitFor("/nudged", 1);
  } finally {
    await scheduler.stop();
  }
  const jobs = (await t.request("GET", `${V1}/admin/system/jobs`)).body.data.items;
  expect(jobs.find((j: { name: string }) => j.name === "deliver-webhooks")).toMatchObject({ schedule: "continuous", fence: 0, last_result: null });
});
