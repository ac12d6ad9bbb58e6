// GET /admin/emails: the email outbox, newest first, filters and cursor pagination, never the sealed
// values (the auth matrix covers callers). SQLite, and PostgreSQL with KEYWARD_TEST_ENGINE=postgres.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { sealedEmail, type EmailTemplate } from "../../../src/modules/email/outbox";
import { emailMessage } from "../../../src/modules/outbox/effects";
import { SECOND } from "../../../src/shared/clock";
import { expectError, expectValidation } from "../admin/helpers";

const V1 = "/api/v1";
const CODE = "730266";
const TOKEN = "9a".repeat(32);

let t: TestApp;
/** Ids by name, in the order they were written (one second apart). */
const ids: Record<string, string> = {};

async function write(name: string, template: EmailTemplate, to: string) {
  t.clock.advance(SECOND);
  const data = template === "sign_in_code" ? { ttl_minutes: 10 } : { product_name: "Acme Editor", role: "admin", invited_by: null, expires_at: "2026-11-28T08:00:00.000Z" };
  const secret: Record<string, string> = template === "sign_in_code" ? { code: CODE } : { accept_url: `http://localhost/portal/accept-invite#token=${TOKEN}` };
  const m = await t.deps.repos.outbox.enqueue(emailMessage(sealedEmail(t.deps.secrets, { template, to, at: t.clock.now(), data, secret })));
  ids[name] = m.id;
}

async function list(query = "") {
  const res = await t.request("GET", `${V1}/admin/emails${query}`);
  expect(res.status).toBe(200);
  return res.body.data as { items: Record<string, unknown>[]; next_cursor: string | null };
}
const names = (items: Record<string, unknown>[]) => items.map((e) => Object.keys(ids).find((k) => ids[k] === e.id));

beforeAll(async () => {
  t = await createTestApp();
  await write("a", "sign_in_code", "Bob@Example.com");
  await write("b", "seat_invite", "carol@example.com");
  await write("c", "sign_in_code", "bob@example.com");
  await write("d", "seat_invite", "bob@example.com.evil");
  // A webhook event is not an email.
  await t.deps.repos.outbox.enqueue({ kind: "event", topic: "license.revoked", payload: { to: "bob@example.com" }, at: t.clock.now() });
  // Every status on the list: the oldest logged, the next given up, the newest two still pending.
  const [first, second] = await t.deps.repos.outbox.claimDue({ now: t.clock.now(), limit: 2, leaseUntil: new Date(t.clock.nowMs() + 60_000), kinds: ["email"] });
  await t.deps.repos.outbox.markSent(first!.id, first!.nextAttemptAt, t.clock.now(), "logged");
  await t.deps.repos.outbox.markFailed(second!.id, second!.nextAttemptAt, "SMTP 550: mailbox unavailable", null);
});
afterAll(() => t.close());

describe("GET /admin/emails", () => {
  test("lists emails only, newest first, with their status and no sealed values", async () => {
    const page = await list();
    expect(names(page.items)).toEqual(["d", "c", "b", "a"]);
    expect(page.next_cursor).toBeNull();
    expect(page.items[3]).toEqual({
      id: ids.a,
      template: "sign_in_code",
      to: "Bob@Example.com",
      subject: "Your sign-in code",
      status: "logged",
      attempts: 0,
      last_error: null,
      created_at: "2026-11-21T08:00:01.000Z",
      sent_at: "2026-11-21T08:00:04.000Z",
    });
    expect(page.items[2]).toMatchObject({ template: "seat_invite", subject: "You are invited to Acme Editor", status: "failed", attempts: 1, last_error: "SMTP 550: mailbox unavailable", sent_at: null });
    expect(page.items[0]).toMatchObject({ status: "pending", attempts: 0, last_error: null, sent_at: null });
    const raw = JSON.stringify(page);
    expect(raw).not.toContain("sealed");
    expect(raw).not.toContain(CODE);
    expect(raw).not.toContain(TOKEN);
  });

  test("filters: status, template, and to (exact, case-insensitive); they combine", async () => {
    expect(names((await list("?status=pending")).items)).toEqual(["d", "c"]);
    expect(names((await list("?status=logged")).items)).toEqual(["a"]);
    expect(names((await list("?status=failed")).items)).toEqual(["b"]);
    expect(names((await list("?status=sent")).items)).toEqual([]);
    expect(names((await list("?template=sign_in_code")).items)).toEqual(["c", "a"]);
    expect(names((await list("?template=seat_invite")).items)).toEqual(["d", "b"]);
    // Exact: bob@example.com.evil is another address; case does not matter.
    expect(names((await list("?to=BOB%40example.COM")).items)).toEqual(["c", "a"]);
    expect(names((await list("?to=bob%40example")).items)).toEqual([]);
    expect(names((await list("?to=bob%40example.com&status=pending")).items)).toEqual(["c"]);
    expect(names((await list("?to=bob%40example.com&template=seat_invite")).items)).toEqual([]);
  });

  test("cursor pagination walks every email once, newest first", async () => {
    const first = await list("?limit=3");
    expect(names(first.items)).toEqual(["d", "c", "b"]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await list(`?limit=3&cursor=${encodeURIComponent(first.next_cursor!)}`);
    expect(names(second.items)).toEqual(["a"]);
    expect(second.next_cursor).toBeNull();
    const filtered = await list("?template=sign_in_code&limit=1");
    expect(names(filtered.items)).toEqual(["c"]);
    expect(names((await list(`?template=sign_in_code&limit=1&cursor=${encodeURIComponent(filtered.next_cursor!)}`)).items)).toEqual(["a"]);
  });

  test("bad filters are 400 VALIDATION_ERROR", async () => {
    expectValidation(await t.request("GET", `${V1}/admin/emails?status=bounced`), "status");
    expectValidation(await t.request("GET", `${V1}/admin/emails?template=newsletter`), "template");
    expectValidation(await t.request("GET", `${V1}/admin/emails?limit=0`), "limit");
    expectValidation(await t.request("GET", `${V1}/admin/emails?cursor=nope`), "cursor");
  });

  test("a product-bound admin key is refused: the outbox is system-wide", async () => {
    const product = (await t.request("POST", `${V1}/admin/products`, { body: { name: "Bound", slug: "bound" } })).body.data;
    const key = await t.apiKey(["admin"], product.id);
    expectError(await t.request("GET", `${V1}/admin/emails`, { key }), 403, "PRODUCT_SCOPE_MISMATCH");
  });
});
