// Webhook endpoints through the admin API: the SSRF rule at creation, update and delivery (without
// WEBHOOK_ALLOW_PRIVATE), secrets shown once, product binding, validation, audit, and the event log
// (GET /admin/events). The auth matrix covers every caller kind. SQLite, and PostgreSQL with
// KEYWARD_TEST_ENGINE=postgres.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { startWebhookReceiver } from "../../support/webhook-receiver";
import { makeCatalog, makeLicense, makeProduct } from "../../support/factories";
import { fixedClock, SECOND } from "../../../src/shared/clock";
import { systemResolver } from "../../../src/modules/webhooks/ssrf";

const V1 = "/api/v1";
const PUBLIC_IP = "93.184.216.34";

describe("SSRF: without WEBHOOK_ALLOW_PRIVATE", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  afterEach(() => {
    t.deps.resolveHost = systemResolver;
  });

  const create = (url: string) => t.request("POST", `${V1}/admin/webhooks`, { body: { url, events: ["*"] } });

  test.each([
    "http://127.0.0.1:8080/hook",
    "https://127.1/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::1]/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://[::ffff:a9fe:a9fe]/hook",
    "http://10.0.0.5/hook",
    "http://172.16.3.4/hook",
    "http://192.168.1.1/hook",
    "http://100.64.0.1/hook",
    "http://[fd12:3456::1]/hook",
    "http://[fe80::1]/hook",
    "http://224.0.0.1/hook",
    "http://0.0.0.0/hook",
    "http://[::]/hook",
    "http://2130706433/hook",
    "http://localhost:3000/hook",
  ])("%s is refused", async (url) => {
    const res = await create(url);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("VALIDATION_ERROR");
    expect(res.body.error.details.fields.url).toStartWith("refused: ");
  });

  test("a host name resolving to a private address is refused (any of its addresses)", async () => {
    t.deps.resolveHost = async (host) => (host === "hooks.internal.example" ? [PUBLIC_IP, "10.1.2.3"] : [PUBLIC_IP]);
    const res = await create("https://hooks.internal.example/x");
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields.url).toContain("resolves to 10.1.2.3, private (10.0.0.0/8)");
    expect((await create("https://hooks.public.example/x")).status).toBe(201);
  });

  test("a name that does not resolve, a non-http scheme, credentials in the URL are refused", async () => {
    t.deps.resolveHost = async () => {
      throw new Error("ENOTFOUND");
    };
    expect((await create("https://nowhere.example/x")).body.error.details.fields.url).toContain("does not resolve");
    expect((await create("ftp://93.184.216.34/x")).body.error.details.fields.url).toBe("must be an https:// (or http://) URL");
    expect((await create(`https://user:pw@${PUBLIC_IP}/x`)).body.error.details.fields.url).toBe("must not carry a user name or password");
    expect((await create("not a url")).status).toBe(400);
  });

  test("an update to a private URL is refused; the stored URL is unchanged", async () => {
    const created = await create(`https://${PUBLIC_IP}/hook`);
    expect(created.status).toBe(201);
    const res = await t.request("PATCH", `${V1}/admin/webhooks/${created.body.data.id}`, { body: { url: "http://169.254.169.254/" } });
    expect(res.status).toBe(400);
    expect((await t.request("GET", `${V1}/admin/webhooks/${created.body.data.id}`)).body.data.url).toBe(`https://${PUBLIC_IP}/hook`);
  });

  test("checked again at delivery, after resolution: a name that now resolves to loopback gets nothing", async () => {
    // Earlier tests' endpoints (public addresses) must not be sent anything.
    await t.exec("DELETE FROM webhook_endpoints");
    const r = startWebhookReceiver();
    try {
      const port = new URL(r.url("/")).port;
      t.deps.resolveHost = async () => [PUBLIC_IP];
      const created = await create(`http://rebinding.example:${port}/hook`);
      expect(created.status).toBe(201);
      // The name now points at the receiver on 127.0.0.1 (DNS rebinding).
      t.deps.resolveHost = async () => ["127.0.0.1"];
      await makeCatalog(t.deps);
      await t.request("POST", `${V1}/admin/system/jobs/deliver-outbox/run`);
      const pass = await t.request("POST", `${V1}/admin/system/jobs/deliver-webhooks/run`);
      expect(pass.body.data.result).toMatchObject({ claimed: 1, delivered: 0, retried: 1 });
      expect(r.received).toHaveLength(0);
      const [d] = (await t.request("GET", `${V1}/admin/webhooks/${created.body.data.id}/deliveries`)).body.data.items;
      expect(d).toMatchObject({ status: "pending", attempts: 1, last_response_code: null });
      expect(d.last_error).toBe("the host rebinding.example resolves to 127.0.0.1, loopback (127.0.0.0/8)");
      // Tidy up: this endpoint must not keep failing in later tests.
      await t.request("DELETE", `${V1}/admin/webhooks/${created.body.data.id}`);
    } finally {
      await r.stop();
    }
  });
});

test("production refuses http:// URLs unless WEBHOOK_ALLOW_PRIVATE", async () => {
  // Production needs an https BASE_URL and a master key (testEnv gives one).
  const prod = await createTestApp({ env: { NODE_ENV: "production", BASE_URL: "https://licenses.acme.example" } });
  try {
    const res = await prod.request("POST", `${V1}/admin/webhooks`, { body: { url: `http://${PUBLIC_IP}/hook`, events: ["*"] } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields.url).toContain("must be https:// in production");
    expect((await prod.request("POST", `${V1}/admin/webhooks`, { body: { url: `https://${PUBLIC_IP}/hook`, events: ["*"] } })).status).toBe(201);
  } finally {
    await prod.close();
  }
});

describe("endpoint administration", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: "true" }, clock: fixedClock("2026-11-21T08:00:00.000Z") });
  });
  afterAll(() => t.close());

  test("create returns the secret once; list and get never show it; the secret is stored sealed", async () => {
    const res = await t.request("POST", `${V1}/admin/webhooks`, {
      body: { url: "http://127.0.0.1:9/hook", events: ["license.*", "license.revoked", "license.*"], description: "CRM sync", ed25519: true },
    });
    expect(res.status).toBe(201);
    const e = res.body.data;
    expect(e).toMatchObject({
      url: "http://127.0.0.1:9/hook",
      description: "CRM sync",
      events: ["license.*", "license.revoked"],
      enabled: true,
      product_id: null,
      previous_secret_expires_at: null,
      consecutive_failures: 0,
      disabled_reason: null,
      disabled_at: null,
      created_at: "2026-11-21T08:00:00.000Z",
    });
    expect(e.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(e.ed25519_public_key).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    const got = (await t.request("GET", `${V1}/admin/webhooks/${e.id}`)).body.data;
    expect(got).toEqual(Object.fromEntries(Object.entries(e).filter(([k]) => k !== "secret")));
    const listed = (await t.request("GET", `${V1}/admin/webhooks`)).body.data;
    expect(JSON.stringify(listed)).not.toContain(e.secret);
    const [row] = await t.exec<{ secret_encrypted: string; signing_key_encrypted: string }>("SELECT secret_encrypted, signing_key_encrypted FROM webhook_endpoints WHERE id = $1", [e.id]);
    expect(row!.secret_encrypted).toStartWith("v1.");
    expect(row!.secret_encrypted).not.toContain(e.secret.slice(6, 20));
    expect(row!.signing_key_encrypted).toStartWith("v1.");
    const audit = (await t.request("GET", `${V1}/admin/audit?entity_type=webhook_endpoint`)).body.data.items;
    expect(JSON.stringify(audit)).not.toContain(e.secret);
  });

  test("filters are checked: unknown types and prefixes, bad shapes, none", async () => {
    const bad = async (events: unknown) => {
      const res = await t.request("POST", `${V1}/admin/webhooks`, { body: { url: "http://127.0.0.1:9/x", events } });
      expect(res.status).toBe(400);
      return res.body.error.details.fields.events as string;
    };
    expect(await bad(["license.exploded"])).toBe('unknown event type "license.exploded"');
    expect(await bad(["nothing.*"])).toBe('no event type starts with "nothing."');
    expect(await bad(["license*"])).toContain("is not an event type");
    expect(await bad([])).toBe("Expected array length to be greater or equal to 1");
  });

  test("update, disable, enable, delete — each audited", async () => {
    const e = (await t.request("POST", `${V1}/admin/webhooks`, { body: { url: "http://127.0.0.1:9/a", events: ["*"] } })).body.data;
    t.clock.advance(SECOND);
    const patched = await t.request("PATCH", `${V1}/admin/webhooks/${e.id}`, { body: { url: "http://127.0.0.1:9/b", events: ["release.*"], description: "d", ed25519: true } });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ url: "http://127.0.0.1:9/b", events: ["release.*"], description: "d", updated_at: "2026-11-21T08:00:01.000Z" });
    expect(patched.body.data.ed25519_public_key).toStartWith("whpk_");
    expect((await t.request("PATCH", `${V1}/admin/webhooks/${e.id}`, { body: { ed25519: false } })).body.data.ed25519_public_key).toBeNull();
    expect((await t.request("POST", `${V1}/admin/webhooks/${e.id}/disable`)).body.data).toMatchObject({ enabled: false, disabled_reason: "manual" });
    expect((await t.request("POST", `${V1}/admin/webhooks/${e.id}/enable`)).body.data).toMatchObject({ enabled: true, disabled_reason: null });
    expect((await t.request("POST", `${V1}/admin/webhooks/${e.id}/rotate-secret`)).status).toBe(200);
    expect((await t.request("DELETE", `${V1}/admin/webhooks/${e.id}`)).status).toBe(200);
    expect((await t.request("GET", `${V1}/admin/webhooks/${e.id}`)).status).toBe(404);
    const audit = (await t.request("GET", `${V1}/admin/audit?entity_type=webhook_endpoint&entity_id=${e.id}`)).body.data.items;
    expect(audit.map((a: { action: string }) => a.action).sort()).toEqual(
      ["webhook.create", "webhook.delete", "webhook.disable", "webhook.enable", "webhook.rotate_secret", "webhook.update", "webhook.update"].sort(),
    );
  });

  test("product binding: a bound key manages its product's endpoints only, never unscoped ones", async () => {
    const mine = await makeProduct(t.deps);
    const theirs = await makeProduct(t.deps);
    const key = await t.apiKey(["admin"], mine.id);
    const post = (body: Record<string, unknown>) => t.request("POST", `${V1}/admin/webhooks`, { key, body: { url: "http://127.0.0.1:9/p", events: ["*"], ...body } });
    const own = await post({ product_id: mine.id });
    expect(own.status).toBe(201);
    expect((await post({ product_id: theirs.id })).body.error.code).toBe("PRODUCT_SCOPE_MISMATCH");
    expect((await post({})).body.error.code).toBe("PRODUCT_SCOPE_MISMATCH");
    const unscoped = (await t.request("POST", `${V1}/admin/webhooks`, { body: { url: "http://127.0.0.1:9/u", events: ["*"] } })).body.data;
    expect((await t.request("GET", `${V1}/admin/webhooks/${unscoped.id}`, { key })).status).toBe(403);
    const listed = (await t.request("GET", `${V1}/admin/webhooks`, { key })).body.data.items;
    expect(listed.map((e: { id: string }) => e.id)).toEqual([own.body.data.id]);
    // Moving its endpoint to another product is refused too.
    const moved = await t.request("PATCH", `${V1}/admin/webhooks/${own.body.data.id}`, { key, body: { product_id: theirs.id } });
    expect(moved.body.error.code).toBe("PRODUCT_SCOPE_MISMATCH");
  });
});

describe("GET /admin/events", () => {
  let t: TestApp;
  let a: Awaited<ReturnType<typeof makeCatalog>>;
  let b: Awaited<ReturnType<typeof makeCatalog>>;
  beforeAll(async () => {
    t = await createTestApp({ clock: fixedClock("2026-11-21T08:00:00.000Z") });
    a = await makeCatalog(t.deps);
    t.clock.advance(SECOND);
    b = await makeCatalog(t.deps);
    t.clock.advance(SECOND);
    const revoked = await t.request("POST", `${V1}/admin/licenses/${a.license.id}/revoke`);
    expect(revoked.status).toBe(200);
    t.clock.advance(SECOND);
    await makeLicense(t.deps, { productId: b.product.id, planId: b.plan.id });
  });
  afterAll(() => t.close());

  const list = async (query = "") => {
    const res = await t.request("GET", `${V1}/admin/events${query}`);
    expect(res.status).toBe(200);
    return res.body.data as { items: Record<string, any>[]; next_cursor: string | null };
  };
  const summary = (items: Record<string, any>[]) => items.map((e) => `${e.type}@${e.created_at.slice(17, 19)}`);

  test("newest first, with type, timestamp, data and product_id", async () => {
    const page = await list();
    expect(summary(page.items)).toEqual(["license.created@03", "license.revoked@02", "license.created@01", "license.created@00"]);
    expect(page.items[1]).toEqual({
      id: expect.any(String),
      type: "license.revoked",
      timestamp: "2026-11-21T08:00:02.000Z",
      data: expect.objectContaining({ license_id: a.license.id, product_id: a.product.id, status: "revoked", previous_status: "active" }),
      product_id: a.product.id,
      created_at: "2026-11-21T08:00:02.000Z",
    });
  });

  test("filters: exact type, prefix, product, since (inclusive) and until (exclusive), cursor", async () => {
    expect(summary((await list("?type=license.revoked")).items)).toEqual(["license.revoked@02"]);
    expect(summary((await list("?type=license.*")).items)).toHaveLength(4);
    expect((await list("?type=release.*")).items).toEqual([]);
    expect(summary((await list(`?product_id=${b.product.id}`)).items)).toEqual(["license.created@03", "license.created@01"]);
    expect(summary((await list("?since=2026-11-21T08:00:01.000Z&until=2026-11-21T08:00:03.000Z")).items)).toEqual(["license.revoked@02", "license.created@01"]);
    const first = await list("?limit=3");
    expect(first.items).toHaveLength(3);
    const rest = await list(`?limit=3&cursor=${first.next_cursor}`);
    expect(summary(rest.items)).toEqual(["license.created@00"]);
    expect(rest.next_cursor).toBeNull();
    const bad = await t.request("GET", `${V1}/admin/events?type=license%25`);
    expect(bad.status).toBe(400);
  });

  test("a product-bound key sees its product's events only", async () => {
    const key = await t.apiKey(["admin"], a.product.id);
    const res = await t.request("GET", `${V1}/admin/events`, { key });
    expect(res.body.data.items.map((e: { product_id: string }) => e.product_id)).toEqual([a.product.id, a.product.id]);
    expect((await t.request("GET", `${V1}/admin/events?product_id=${b.product.id}`, { key })).status).toBe(403);
  });
});

describe("the audit rows of endpoint changes (each with its change in one unit of work)", () => {
  test("create, update, disable, enable, rotate, test, redeliver and delete each record one row; an unknown endpoint records none", async () => {
    const t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: "true" } });
    try {
      const e = (await t.request("POST", `${V1}/admin/webhooks`, { body: { url: "http://127.0.0.1:9/audit", events: ["*"] } })).body.data;
      expect((await t.request("PATCH", `${V1}/admin/webhooks/${e.id}`, { body: { description: "renamed" } })).status).toBe(200);
      expect((await t.request("POST", `${V1}/admin/webhooks/${e.id}/disable`)).status).toBe(200);
      expect((await t.request("POST", `${V1}/admin/webhooks/${e.id}/enable`)).status).toBe(200);
      expect((await t.request("POST", `${V1}/admin/webhooks/${e.id}/rotate-secret`)).status).toBe(200);
      const sent = await t.request("POST", `${V1}/admin/webhooks/${e.id}/test`);
      expect(sent.status).toBeLessThan(300);
      const delivery = (await t.request("GET", `${V1}/admin/webhooks/${e.id}/deliveries`)).body.data.items[0];
      expect((await t.request("POST", `${V1}/admin/webhooks/deliveries/${delivery.id}/redeliver`)).status).toBe(200);
      expect((await t.request("PATCH", `${V1}/admin/webhooks/00000000-0000-7000-8000-000000000000`, { body: { description: "x" } })).status).toBe(404);
      expect((await t.request("DELETE", `${V1}/admin/webhooks/${e.id}`)).status).toBeLessThan(300);
      const rows = await t.exec<{ action: string }>("SELECT action FROM audit_log WHERE action LIKE 'webhook.%' ORDER BY created_at, id");
      expect(rows.map((r) => r.action).sort()).toEqual(
        ["webhook.create", "webhook.update", "webhook.disable", "webhook.enable", "webhook.rotate_secret", "webhook.test", "webhook.redeliver", "webhook.delete"].sort(),
      );
    } finally {
      await t.close();
    }
  });
});
