// Invite acceptance over HTTP (spec: Invite acceptance, Seat state table, Limits): the accept creates
// the user and signs the browser in; every failure is the one 404 SEAT_INVITE_INVALID, byte-identical
// apart from the request id; an unusable license burns the token and leaves the seat pending; the
// 61st request in a minute from one address is 429; a cross-site POST is refused; the accept page.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { patchLicense } from "../../support/license-api";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import { applyLicenseAction } from "../../../src/modules/licenses/service";
import { accept, cookieOf, lastToken, portalGet, portalPost, team, uniqueEmail } from "./helpers";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ label: "invites" });
});
afterAll(() => t.close());
beforeEach(() => t.clock.advance(2 * 60_000));

const DAY = 86_400_000;

async function invited(over: Parameters<typeof team>[1] = {}) {
  const tm = await team(t, over);
  const email = uniqueEmail("invitee");
  const added = await portalPost(t, tm.owner.cookie, "/portal/seats/add", { license_key: tm.key, email, role: "admin" });
  expect(added.status).toBe(200);
  return { tm, email, seatId: added.body.data.seat_id as string, token: await lastToken(t, email) };
}

const seatRow = async (seatId: string) =>
  (await t.exec<{ accepted_at: unknown; invite_token_hash: string | null; user_id: string | null; removed_at: unknown }>(
    "SELECT accepted_at, invite_token_hash, user_id, removed_at FROM seats WHERE id = $1",
    [seatId],
  ))[0]!;

/** The response text with the request id taken out (it is the only part allowed to differ). */
const withoutRequestId = (text: string, requestId: string | null) => (requestId ? text.replaceAll(requestId, "<rid>") : text);

describe("accepting an invite", () => {
  test("creates the user, accepts the seat, sets the session cookie; the cookie lists the license's seats", async () => {
    const { tm, email, seatId, token } = await invited();
    expect(await t.exec("SELECT id FROM users WHERE email = $1", [email])).toEqual([]);
    const res = await accept(t, token);
    expect(res.status).toBe(200);
    const users = await t.exec<{ id: string }>("SELECT id FROM users WHERE email = $1", [email]);
    expect(users.length).toBe(1);
    expect(res.body.data).toEqual({ user_id: users[0]!.id, email, license_id: tm.licenseId, product_name: expect.any(String), role: "admin" });
    const set = res.headers.get("set-cookie")!;
    expect(set).toMatch(/^session=[^;]+;/);
    expect(set).toMatch(/HttpOnly/i);
    const row = await seatRow(seatId);
    expect(row.invite_token_hash).toBeNull();
    expect(row.user_id).toBe(users[0]!.id);
    expect(row.accepted_at).not.toBeNull();
    // The new session works: the invitee, an admin now, sees the seats and the license.
    const cookie = cookieOf(res);
    const seats = await portalPost(t, cookie, "/portal/seats", { license_key: tm.key });
    expect(seats.status).toBe(200);
    expect(seats.body.data.role).toBe("admin");
    expect(seats.body.data.seats.map((s: { email: string }) => s.email)).toContain(email);
    const licenses = await portalGet(t, cookie, "/portal/licenses");
    expect(licenses.body.data.items.map((l: { license_id: string; license_key: string }) => [l.license_id, l.license_key])).toEqual([[tm.licenseId, tm.key]]);
  });

  test("an existing user (any case of the address) is reused, not duplicated", async () => {
    const tm = await team(t);
    const email = uniqueEmail("existing");
    const first = await portalPost(t, tm.owner.cookie, "/portal/seats/add", { license_key: tm.key, email });
    expect(first.status).toBe(200);
    await t.signIn(email.toUpperCase());
    const res = await accept(t, await lastToken(t, email));
    expect(res.status).toBe(200);
    expect((await t.exec("SELECT id FROM users WHERE lower(email) = $1", [email])).length).toBe(1);
  });
});

describe("every failure is the same 404 SEAT_INVITE_INVALID", () => {
  test("malformed, unknown, used, expired, removed, and unusable-license tokens: byte-identical apart from the request id", async () => {
    const cases: { name: string; token: () => Promise<unknown> }[] = [];
    const add = (name: string, token: () => Promise<unknown>) => cases.push({ name, token });

    add("malformed: short", async () => "abc");
    add("malformed: not hex", async () => "z".repeat(64));
    add("malformed: too long", async () => "a".repeat(65));
    add("empty", async () => "");
    add("unknown", async () => "0".repeat(64));
    add("already accepted", async () => {
      const { token } = await invited();
      expect((await accept(t, token)).status).toBe(200);
      return token;
    });
    add("rotated away by a re-invite", async () => {
      const { tm, email, token } = await invited();
      await portalPost(t, tm.owner.cookie, "/portal/seats/add", { license_key: tm.key, email });
      return token;
    });
    add("expired (7 days)", async () => {
      const { token } = await invited();
      t.clock.advance(7 * DAY);
      return token;
    });
    add("seat removed", async () => {
      const { tm, seatId, token } = await invited();
      await portalPost(t, tm.owner.cookie, "/portal/seats/remove", { license_key: tm.key, seat_id: seatId });
      return token;
    });
    for (const action of ["suspend", "revoke"] as const) {
      add(`license ${action}ed`, async () => {
        const { tm, token } = await invited();
        await applyLicenseAction(t.deps, SYSTEM_ACTOR, tm.licenseId, action);
        return token;
      });
    }
    for (const status of ["canceled", "expired"] as const) {
      add(`license ${status}`, async () => {
        const { tm, token } = await invited();
        await patchLicense(t, tm.licenseId, { status });
        return token;
      });
    }
    add("license past valid_until + grace", async () => {
      const { tm, token } = await invited({ graceDays: 2 });
      await patchLicense(t, tm.licenseId, { validUntil: new Date(t.clock.nowMs() - 3 * DAY) });
      return token;
    });

    let reference: string | null = null;
    for (const c of cases) {
      t.clock.advance(2 * 60_000);
      const token = await c.token();
      const res = await accept(t, token);
      expect({ name: c.name, status: res.status }).toEqual({ name: c.name, status: 404 });
      expect(res.headers.get("set-cookie")).toBeNull();
      const text = withoutRequestId(res.text, res.headers.get("x-request-id"));
      reference ??= text;
      expect({ name: c.name, text }).toEqual({ name: c.name, text: reference });
    }
    expect(JSON.parse(reference!)).toEqual({ success: false, error: { code: "SEAT_INVITE_INVALID", message: expect.any(String), details: null } });
  });

  test("an unusable license burns the token and leaves the seat pending; after reinstatement the owner must re-invite", async () => {
    const { tm, email, seatId, token } = await invited();
    await applyLicenseAction(t.deps, SYSTEM_ACTOR, tm.licenseId, "suspend");
    expect((await accept(t, token)).status).toBe(404);
    const row = await seatRow(seatId);
    expect(row.invite_token_hash).toBeNull(); // burned, committed although the accept failed
    expect(row.accepted_at).toBeNull();
    expect(row.user_id).toBeNull();
    expect(await t.exec("SELECT id FROM users WHERE email = $1", [email])).toEqual([]);
    expect(await t.exec("SELECT action FROM audit_log WHERE action = 'seat.accept' AND entity_id = $1", [tm.licenseId])).toEqual([
      { action: "seat.accept" },
      { action: "seat.accept" },
    ]); // the team's two accepts, not this one
    await applyLicenseAction(t.deps, SYSTEM_ACTOR, tm.licenseId, "reinstate");
    expect((await accept(t, token)).status).toBe(404); // still burned
    const seats = await portalPost(t, tm.owner.cookie, "/portal/seats", { license_key: tm.key });
    expect(seats.body.data.seats.find((s: { seat_id: string }) => s.seat_id === seatId)).toMatchObject({ state: "pending", invite_expires_at: null });
    const again = await portalPost(t, tm.owner.cookie, "/portal/seats/add", { license_key: tm.key, email });
    expect(again.body.data.result).toBe("reinvited");
    expect((await accept(t, await lastToken(t, email))).status).toBe(200);
  });

  test("a token works once even when two accepts race", async () => {
    const { token } = await invited();
    const results = await Promise.all([accept(t, token), accept(t, token), accept(t, token)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 404, 404]);
  });
});

describe("secrets at rest", () => {
  test("no table holds an invite token or its accept link in the clear, before or after acceptance", async () => {
    const { tm, email, token } = await invited();
    await portalPost(t, tm.owner.cookie, "/portal/seats/add", { license_key: tm.key, email }); // rotated
    const rotated = await lastToken(t, email);
    const tables =
      t.engine === "sqlite"
        ? (await t.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")).map((r) => r.name)
        : (await t.exec<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'")).map((r) => r.name);
    expect(tables).toEqual(expect.arrayContaining(["seats", "outbox", "audit_log", "users", "sessions"]));
    const dump = async () => {
      let all = "";
      for (const table of tables) all += JSON.stringify(await t.exec(`SELECT * FROM "${table}"`));
      return all;
    };
    const before = await dump();
    expect(before).toContain(email); // the search sees data
    for (const secret of [token, rotated, token.toUpperCase(), rotated.toUpperCase()]) expect(before).not.toContain(secret);
    expect((await accept(t, rotated)).status).toBe(200);
    expect(await dump()).not.toContain(rotated);
  });
});

describe("abuse", () => {
  test("the 61st accept in a minute from one address gets 429 RATE_LIMITED with Retry-After", async () => {
    const own = await createTestApp({ label: "invites-rate" });
    try {
      for (let i = 0; i < 60; i++) {
        const res = await own.request("POST", "/api/v1/invites/accept", { body: { token: "0".repeat(64) }, key: null, headers: { origin: own.deps.config.baseUrl } });
        expect({ i, status: res.status }).toEqual({ i, status: 404 });
      }
      const limited = await own.request("POST", "/api/v1/invites/accept", { body: { token: "0".repeat(64) }, key: null, headers: { origin: own.deps.config.baseUrl } });
      expect(limited.status).toBe(429);
      expect(limited.body.error.code).toBe("RATE_LIMITED");
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      // Its own counter: the public license routes are not affected.
      expect((await own.request("POST", "/api/v1/license/verify", { body: { license_key: "x", identifier: "y" }, key: null })).status).toBe(404);
      own.clock.advance(2 * 60_000);
      const later = await own.request("POST", "/api/v1/invites/accept", { body: { token: "0".repeat(64) }, key: null, headers: { origin: own.deps.config.baseUrl } });
      expect(later.status).toBe(404);
    } finally {
      await own.close();
    }
  });

  test("a cross-site POST is refused and does not consume the invite", async () => {
    const { seatId, token } = await invited();
    const res = await accept(t, token, { origin: "https://evil.example" });
    expect(res.status).toBe(403);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect((await seatRow(seatId)).invite_token_hash).not.toBeNull();
    expect((await accept(t, token)).status).toBe(200);
  });
});

describe("the accept page", () => {
  test("GET /portal/accept-invite serves a self-contained page with a strict CSP; its script posts the token from the fragment", async () => {
    const page = await t.request("GET", "/portal/accept-invite", { key: null });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    // No external assets, no inline script.
    expect(page.text).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(page.text).not.toMatch(/<script>(?!<\/script>)/);
    const srcs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((u) => !u.startsWith("data:"));
    for (const src of srcs) {
      const asset = await t.request("GET", new URL(src, "http://localhost/portal/accept-invite").pathname, { key: null });
      expect({ src, status: asset.status }).toEqual({ src, status: 200 });
    }
    const script = await t.request("GET", "/portal/accept-invite/app.js", { key: null });
    expect(script.headers.get("content-type")).toContain("javascript");
    expect(script.text).toContain("location.hash");
    expect(script.text).toContain("../api/v1/invites/accept");
    expect(script.text).toContain('credentials: "include"');
    // The page is not an API operation.
    const doc = (await t.request("GET", "/api/v1/openapi.json")).body;
    expect(Object.keys(doc.paths)).not.toContain("/portal/accept-invite");
  });
});
