// Admin users and roles (issue 10 points 3 and 8): roles read on every request, ADMIN_EMAILS
// bootstrap, the last-admin guard, audit rows naming the session's user, sessions list and revoke.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";

const V1 = "/api/v1";
const BOOT = "boot@keyward.test";
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { ADMIN_EMAILS: ` ${BOOT.toUpperCase()} , second@keyward.test` } });
});
afterAll(() => t.close());

const unique = (p: string) => `${p}-${crypto.randomUUID()}@example.com`;

describe("roles are read on every request", () => {
  test("a demoted admin loses write access with the next request; a removed one loses everything", async () => {
    const cookie = await t.signIn(unique("staff"), { role: "admin" });
    const me = (await t.request("GET", `${V1}/auth/me`, { cookie })).body.data.user;
    expect(me.role).toBe("admin");
    expect((await t.request("POST", `${V1}/admin/products`, { cookie, body: { name: "P", slug: `p-${Date.now()}` } })).status).toBe(201);

    expect((await t.request("POST", `${V1}/admin/users/${me.id}/role`, { body: { role: "viewer" } })).status).toBe(200);
    const refused = await t.request("POST", `${V1}/admin/products`, { cookie, body: { name: "Q", slug: `q-${Date.now()}` } });
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 403, code: "INSUFFICIENT_SCOPE" });
    expect((await t.request("GET", `${V1}/admin/products`, { cookie })).status).toBe(200);

    expect((await t.request("DELETE", `${V1}/admin/users/${me.id}`)).status).toBe(200);
    expect((await t.request("GET", `${V1}/admin/products`, { cookie })).status).toBe(401);
    expect((await t.request("GET", `${V1}/auth/me`, { cookie })).status).toBe(401);
  });

  test("a role cleared to null leaves a plain customer: 403 on admin routes, /auth/me still works", async () => {
    const cookie = await t.signIn(unique("support"), { role: "support" });
    const id = (await t.request("GET", `${V1}/auth/me`, { cookie })).body.data.user.id;
    expect((await t.request("GET", `${V1}/admin/licenses`, { cookie })).status).toBe(200);
    expect((await t.request("POST", `${V1}/admin/users/${id}/role`, { body: { role: null } })).body.data.role).toBeNull();
    expect((await t.request("GET", `${V1}/admin/licenses`, { cookie })).status).toBe(403);
    expect((await t.request("GET", `${V1}/auth/me`, { cookie })).status).toBe(200);
  });
});

describe("ADMIN_EMAILS", () => {
  test("a listed address is an admin on first sign-in, whatever its case", async () => {
    const cookie = await t.signIn("Boot@Keyward.Test");
    const me = (await t.request("GET", `${V1}/auth/me`, { cookie })).body.data.user;
    expect(me).toMatchObject({ email: BOOT, role: "admin" });
    expect((await t.request("POST", `${V1}/admin/products`, { cookie, body: { name: "B", slug: `b-${Date.now()}` } })).status).toBe(201);
  });

  test("the API cannot demote or remove it (409 USER_MANAGED_BY_CONFIG)", async () => {
    await t.signIn(BOOT);
    const user = (await t.request("GET", `${V1}/admin/users?search=boot@`)).body.data.items[0];
    expect(user).toMatchObject({ email: BOOT, role: null, effective_role: "admin", managed_by_config: true });
    const demote = await t.request("POST", `${V1}/admin/users/${user.id}/role`, { body: { role: "viewer" } });
    expect({ status: demote.status, code: demote.body.error.code }).toEqual({ status: 409, code: "USER_MANAGED_BY_CONFIG" });
    const remove = await t.request("DELETE", `${V1}/admin/users/${user.id}`);
    expect({ status: remove.status, code: remove.body.error.code }).toEqual({ status: 409, code: "USER_MANAGED_BY_CONFIG" });
  });

  test("granting a role to a listed address is 409 and creates no user", async () => {
    const granted = await t.request("POST", `${V1}/admin/users`, { body: { email: "Second@Keyward.Test", role: "viewer" } });
    expect({ status: granted.status, code: granted.body.error.code }).toEqual({ status: 409, code: "USER_MANAGED_BY_CONFIG" });
    expect(await t.deps.repos.users.findByEmail("second@keyward.test")).toBeNull();
  });

  test("config: a malformed entry is refused at boot", async () => {
    await expect(createTestApp({ env: { ADMIN_EMAILS: "ok@example.com, not-an-address" } })).rejects.toThrow(/ADMIN_EMAILS/);
  });
});

describe("the last admin", () => {
  test("without ADMIN_EMAILS, the only admin cannot be demoted or removed; with a second one it can", async () => {
    const solo = await createTestApp();
    try {
      const a = await solo.signIn(unique("only"), { role: "admin" });
      const id = (await solo.request("GET", `${V1}/auth/me`, { cookie: a })).body.data.user.id;
      const demote = await solo.request("POST", `${V1}/admin/users/${id}/role`, { cookie: a, body: { role: "viewer" } });
      expect({ status: demote.status, code: demote.body.error.code }).toEqual({ status: 409, code: "LAST_ADMIN" });
      expect((await solo.request("DELETE", `${V1}/admin/users/${id}`, { cookie: a })).body.error.code).toBe("LAST_ADMIN");
      // Another admin by email (created before they ever sign in), then the first may step down.
      const granted = await solo.request("POST", `${V1}/admin/users`, { cookie: a, body: { email: "Next@Example.com", role: "admin" } });
      expect(granted.body.data).toMatchObject({ email: "next@example.com", role: "admin", last_sign_in_at: null });
      expect((await solo.request("POST", `${V1}/admin/users/${id}/role`, { cookie: a, body: { role: "viewer" } })).status).toBe(200);
      // Granted before sign-in: the role holds when they sign in.
      const next = await solo.signIn("next@example.com");
      expect((await solo.request("GET", `${V1}/auth/me`, { cookie: next })).body.data.user.role).toBe("admin");
    } finally {
      await solo.close();
    }
  });
});

describe("audit and sessions", () => {
  test("audit rows of a session's actions name the user", async () => {
    const cookie = await t.signIn(unique("auditor"), { role: "admin" });
    const id = (await t.request("GET", `${V1}/auth/me`, { cookie })).body.data.user.id;
    const created = await t.request("POST", `${V1}/admin/products`, { cookie, body: { name: "Audited", slug: `audited-${Date.now()}` } });
    expect(created.status).toBe(201);
    const rows = (await t.request("GET", `${V1}/admin/audit?entity_id=${created.body.data.id}`)).body.data.items;
    expect(rows.map((r: { actor_type: string; actor_id: string }) => [r.actor_type, r.actor_id])).toEqual([["session", id]]);
  });

  test("admins list live sessions (no token or hash) and revoke one; sign-out ends all of a user's", async () => {
    const email = unique("listed");
    const a = await t.signIn(email);
    const b = await t.signIn(email);
    const id = (await t.request("GET", `${V1}/auth/me`, { cookie: a })).body.data.user.id;
    const listed = await t.request("GET", `${V1}/admin/sessions?user_id=${id}`);
    expect(listed.body.data.items.length).toBe(2);
    expect(JSON.stringify(listed.body)).not.toMatch(/token|hash/i);
    const revoked = await t.request("POST", `${V1}/admin/sessions/${listed.body.data.items[0].id}/revoke`);
    expect(revoked.status).toBe(200);
    const alive = [(await t.request("GET", `${V1}/auth/me`, { cookie: a })).status, (await t.request("GET", `${V1}/auth/me`, { cookie: b })).status].sort();
    expect(alive).toEqual([200, 401]);
    expect((await t.request("POST", `${V1}/admin/sessions/${listed.body.data.items[0].id}/revoke`)).status).toBe(404);
    expect((await t.request("POST", `${V1}/admin/users/${id}/sign-out`)).body.data).toEqual({ sessions_ended: 1 });
    expect((await t.request("GET", `${V1}/admin/sessions?user_id=${id}`)).body.data.items).toEqual([]);
  });

  test("users list filters by role and search, newest first, with a cursor", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    for (const role of ["viewer", "viewer", "support"] as const) await t.signIn(`${tag}-${role}-${crypto.randomUUID()}@example.com`, { role });
    const viewers = await t.request("GET", `${V1}/admin/users?role=viewer&search=${tag}`);
    expect(viewers.body.data.items.map((u: { role: string }) => u.role)).toEqual(["viewer", "viewer"]);
    const page1 = await t.request("GET", `${V1}/admin/users?search=${tag}&limit=2`);
    expect(page1.body.data.items.length).toBe(2);
    const page2 = await t.request("GET", `${V1}/admin/users?search=${tag}&limit=2&cursor=${page1.body.data.next_cursor}`);
    expect(page2.body.data.items.length).toBe(1);
    expect(page2.body.data.next_cursor).toBeNull();
    expect((await t.request("GET", `${V1}/admin/users?role=owner`)).status).toBe(400);
  });
});
