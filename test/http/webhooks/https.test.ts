// Webhook delivery over HTTPS, to real TLS receivers on 127.0.0.1 (Bun.serve with certificates made
// at test time by test/support/tls-certs.ts: a test CA, a server certificate it signed, one for the
// wrong name, and a self-signed one). The receiver's certificate is verified, chain and name, and a
// private CA is trusted the standard way, NODE_EXTRA_CA_CERTS. That variable is read when a process
// starts, so the trusting node is a second Keyward process (`keyward serve`) on this test app's
// database; this test process itself trusts no test CA. The SSRF guard applies to https:// targets
// as to http:// ones, after DNS resolution too.
// SQLite, and PostgreSQL with KEYWARD_TEST_ENGINE=postgres.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { createTestApp, type TestApp } from "../../support/app";
import { makeCa, makeLeaf } from "../../support/tls-certs";
import { startWebhookReceiver, type ReceivedHook } from "../../support/webhook-receiver";
import { makeCatalog } from "../../support/factories";
import { removeTempDirs, startKeyward, tempDir } from "../../process/support";
import { fixedClock } from "../../../src/shared/clock";

const V1 = "/api/v1";
const PUBLIC_IP = "93.184.216.34";

const ca = makeCa();
/** Signed by the test CA, for 127.0.0.1 and hooks.example.test. */
const good = makeLeaf({ ips: ["127.0.0.1"], dns: ["hooks.example.test"], issuer: ca });
/** Signed by the test CA, but for another name: 127.0.0.1 is not in it. */
const wrongName = makeLeaf({ dns: ["elsewhere.example"], issuer: ca });
/** Self-signed for 127.0.0.1: no CA vouches for it. */
const selfSigned = makeLeaf({ ips: ["127.0.0.1"] });

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});
afterAll(removeTempDirs);

async function app(env: Record<string, string> = {}) {
  // The real time: the standardwebhooks library checks webhook-timestamp against it.
  const t = await createTestApp({ env, clock: fixedClock(Date.now()) });
  cleanup.push(() => t.close());
  return t;
}
function receiver(tls: { cert: string; key: string }) {
  const r = startWebhookReceiver({ tls });
  cleanup.push(() => r.stop());
  return r;
}
async function endpoint(t: TestApp, body: Record<string, unknown>) {
  const res = await t.request("POST", `${V1}/admin/webhooks`, { body });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; secret: string; url: string };
}
async function lastDelivery(t: TestApp, endpointId: string) {
  const res = await t.request("GET", `${V1}/admin/webhooks/${endpointId}/deliveries`);
  expect(res.status).toBe(200);
  expect(res.body.data.items).toHaveLength(1);
  return res.body.data.items[0] as Record<string, any>;
}
async function runJob(t: TestApp, name: "deliver-outbox" | "deliver-webhooks") {
  const res = await t.request("POST", `${V1}/admin/system/jobs/${name}/run`);
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({ status: "ok", error: null });
  return res.body.data.result as Record<string, number>;
}
const headersOf = (h: ReceivedHook) => ({ "webhook-id": h.id, "webhook-timestamp": h.timestamp, "webhook-signature": h.signature });

describe("https:// receivers", () => {
  test("a node that does not trust the receiver's CA sends nothing; the failed attempt is in the delivery log", async () => {
    const t = await app({ WEBHOOK_ALLOW_PRIVATE: "true" });
    const r = receiver(good);
    const e = await endpoint(t, { url: r.url("/hook"), events: ["*"] });
    expect(e.url).toStartWith("https://127.0.0.1:");
    expect((await t.request("POST", `${V1}/admin/webhooks/${e.id}/test`)).status).toBe(202);

    expect(await runJob(t, "deliver-webhooks")).toMatchObject({ claimed: 1, delivered: 0, retried: 1 });
    expect(r.received).toHaveLength(0);
    const d = await lastDelivery(t, e.id);
    expect(d).toMatchObject({ status: "pending", attempts: 1, last_response_code: null, last_latency_ms: null, next_attempt_at: expect.any(String) });
    expect(d.last_error).toContain("unable to verify the first certificate");
    expect((await t.request("GET", `${V1}/admin/webhooks/${e.id}`)).body.data.consecutive_failures).toBe(1);
  });

  test("a node trusting the CA through NODE_EXTRA_CA_CERTS delivers, verified by standardwebhooks; a self-signed or wrong-name certificate is still refused", async () => {
    const t = await app({ WEBHOOK_ALLOW_PRIVATE: "true" });
    const ok = receiver(good);
    const self = receiver(selfSigned);
    const wrong = receiver(wrongName);
    const okEndpoint = await endpoint(t, { url: ok.url("/hook"), events: ["license.*"], description: "CRM over TLS" });
    const selfEndpoint = await endpoint(t, { url: self.url("/hook"), events: ["license.*"] });
    const wrongEndpoint = await endpoint(t, { url: wrong.url("/hook"), events: ["license.*"] });
    const { license } = await makeCatalog(t.deps);
    expect(await runJob(t, "deliver-outbox")).toMatchObject({ claimed: 1, sent: 1 });

    const dir = tempDir("keyward-tls-");
    const caFile = join(dir, "ca.pem");
    writeFileSync(caFile, ca.cert);
    const node = await startKeyward({
      env: {
        DATA_DIR: t.dataDir,
        ...(t.deps.config.databaseUrl ? { DATABASE_URL: t.deps.config.databaseUrl } : {}),
        RELEASE_KEY_ENCRYPTION_KEY: t.deps.config.masterKeyHex!,
        WEBHOOK_ALLOW_PRIVATE: "true",
        JOBS: "off",
        NODE_EXTRA_CA_CERTS: caFile,
        // Delivery verifies certificates whatever this says.
        NODE_TLS_REJECT_UNAUTHORIZED: "0",
      },
    });
    cleanup.push(() => node.stop());
    const res = await fetch(`${node.url}${V1}/admin/system/jobs/deliver-webhooks/run`, { method: "POST", headers: { authorization: `Bearer ${t.adminKey}` } });
    expect(res.status).toBe(200);
    const pass = ((await res.json()) as { data: { status: string; result: Record<string, number> } }).data;
    expect(pass).toMatchObject({ status: "ok", result: { claimed: 3, delivered: 1, retried: 2 } });

    expect(ok.received).toHaveLength(1);
    const [hook] = ok.received;
    expect(new Webhook(okEndpoint.secret).verify(hook!.body, headersOf(hook!))).toMatchObject({
      type: "license.created",
      data: { license_id: license.id, status: "active" },
    });
    expect(await lastDelivery(t, okEndpoint.id)).toMatchObject({ id: hook!.id, status: "delivered", attempts: 1, last_response_code: 200, last_error: null });

    expect(self.received).toHaveLength(0);
    const selfAttempt = await lastDelivery(t, selfEndpoint.id);
    expect(selfAttempt).toMatchObject({ status: "pending", attempts: 1, last_response_code: null });
    expect(selfAttempt.last_error).toContain("certificate");

    expect(wrong.received).toHaveLength(0);
    const wrongAttempt = await lastDelivery(t, wrongEndpoint.id);
    expect(wrongAttempt).toMatchObject({ status: "pending", attempts: 1, last_response_code: null });
    expect(wrongAttempt.last_error).toContain("does not match certificate's altnames");
  }, 60_000);

  describe("SSRF: without WEBHOOK_ALLOW_PRIVATE", () => {
    test("an https:// loopback target is refused when saved: literal, or a name resolving to it", async () => {
      const t = await app();
      t.deps.resolveHost = async (host) => (host === "hooks.example.test" ? ["127.0.0.1"] : [PUBLIC_IP]);
      for (const [url, why] of [
        ["https://127.0.0.1:8443/hook", "the address 127.0.0.1 is loopback (127.0.0.0/8)"],
        ["https://[::ffff:127.0.0.1]/hook", "loopback (127.0.0.0/8)"],
        ["https://hooks.example.test:8443/hook", "the host hooks.example.test resolves to 127.0.0.1, loopback (127.0.0.0/8)"],
      ]) {
        const res = await t.request("POST", `${V1}/admin/webhooks`, { body: { url, events: ["*"] } });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe("VALIDATION_ERROR");
        expect(res.body.error.details.fields.url).toContain(why);
      }
    });

    test("checked again at delivery: an https:// name that now resolves to loopback gets no connection", async () => {
      const t = await app();
      const r = receiver(good);
      const port = new URL(r.url("/")).port;
      t.deps.resolveHost = async () => [PUBLIC_IP];
      const e = await endpoint(t, { url: `https://hooks.example.test:${port}/hook`, events: ["*"] });
      // The name now points at the TLS receiver on 127.0.0.1 (DNS rebinding).
      t.deps.resolveHost = async () => ["127.0.0.1"];
      expect((await t.request("POST", `${V1}/admin/webhooks/${e.id}/test`)).status).toBe(202);
      expect(await runJob(t, "deliver-webhooks")).toMatchObject({ claimed: 1, delivered: 0, retried: 1 });
      expect(r.received).toHaveLength(0);
      const d = await lastDelivery(t, e.id);
      expect(d).toMatchObject({ status: "pending", attempts: 1, last_response_code: null });
      expect(d.last_error).toBe("the host hooks.example.test resolves to 127.0.0.1, loopback (127.0.0.0/8)");
    });
  });
});
