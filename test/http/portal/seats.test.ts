// Portal seats over HTTP (spec: Portal seats, Seat state table): every row of the state table, the
// seat limit counting pending invites, self-invite and role validation, removal, audit rows naming the
// session's user, events, and the admin seat routes.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { accept, invites, lastToken, portalPost, team, uniqueEmail, type Team } from "./helpers";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ label: "portal-seats" });
});
afterAll(() => t.close());
// Invite accept is rate limited per address (60/min) and every in-process request shares one: a
// fresh window per test.
beforeEach(() => t.clock.advance(2 * 60_000));

const add = (cookie: string, key: string, email: string, role?: string) =>
  portalPost(t, cookie, "/portal/seats/add", { license_key: key, email, ...(role ? { role } : {}) });
const list = (cookie: string, key: string) => portalPost(t, cookie, "/portal/seats", { license_key: key });
const remove = (cookie: string, key: string, seatId: string) => portalPost(t, cookie, "/portal/seats/remove", { license_key: key, seat_id: seatId });

async function auditOf(licenseId: string) {
  return await t.exec<{ action: string; actor_type: string; actor_id: string | null }>(
    "SELECT action, actor_type, actor_id FROM audit_log WHERE entity_id = $1 AND action LIKE 'seat.%' ORDER BY created_at, id",
    [licenseId],
  );
}
async function eventsOf(licenseId: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const rows = await t.exec<{ payload: unknown }>("SELECT payload FROM outbox WHERE kind = 'event' AND topic LIKE 'seat.%' ORDER BY created_at, id");
  return rows
    .map((r) => (typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload) as { type: string; data: Record<string, unknown> })
    .filter((e) => e.data.license_id === licenseId);
}
const userIdOf = async (email: string) => (await t.exec<{ id: string }>("SELECT id FROM users WHERE email = $1", [email]))[0]!.id;

describe("the seat state table, row by row", () => {
  let tm: Team;
  beforeEach(async () => {
    tm = await team(t, { maxSeats: 10 });
  });

  test("none → pending: invite email sent, with a 64-hex token in the accept link; only its hash is stored", async () => {
    const email = uniqueEmail("new");
    const before = (await invites(t)).length;
    const res = await add(tm.owner.cookie, tm.key, email.toUpperCase(), "admin");
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      seat_id: expect.any(String),
      email,
      role: "admin",
      state: "pending",
      user_id: null,
      invited_at: t.clock.now().toISOString(),
      invite_expires_at: new Date(t.clock.nowMs() + 7 * 86_400_000).toISOString(),
      accepted_at: null,
      removed_at: null,
      result: "invited",
    });
    const sent = await invites(t);
    expect(sent.length).toBe(before + 1);
    const mail = sent[sent.length - 1]!;
    expect(mail.to).toBe(email);
    expect(mail.acceptUrl).toBe(`${t.deps.config.baseUrl}/portal/accept-invite#token=${mail.token}`);
    expect(mail.data).toMatchObject({ role: "admin", invited_by: tm.owner.email, expires_at: res.body.data.invite_expires_at });
    const stored = await t.exec<{ invite_token_hash: string }>("SELECT invite_token_hash FROM seats WHERE id = $1", [res.body.data.seat_id]);
    expect(stored[0]!.invite_token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored[0]!.invite_token_hash).not.toBe(mail.token);
    // A member default role.
    expect((await add(tm.owner.cookie, tm.key, uniqueEmail("dflt"))).body.data.role).toBe("member");
  });

  test("pending → pending: re-add rotates the token (the old one stops working) and re-sends the email", async () => {
    const email = uniqueEmail("again");
    const first = await add(tm.owner.cookie, tm.key, email);
    const oldToken = await lastToken(t, email);
    t.clock.advance(1000);
    const again = await add(tm.admin.cookie, tm.key, email, "admin");
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ seat_id: first.body.data.seat_id, state: "pending", role: "admin", result: "reinvited" });
    const newToken = await lastToken(t, email);
    expect(newToken).not.toBe(oldToken);
    expect((await invites(t)).filter((i) => i.to === email).length).toBe(2);
    expect((await accept(t, oldToken)).status).toBe(404);
    expect((await accept(t, newToken)).status).toBe(200);
  });

  test("accepted → accepted: re-add returns the existing seat and sends no email", async () => {
    const before = (await invites(t)).length;
    const res = await add(tm.owner.cookie, tm.key, tm.member.email, "admin");
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ seat_id: tm.member.seatId, state: "accepted", role: "member", result: "existing" });
    expect((await invites(t)).length).toBe(before);
  });

  test("pending → accepted via /invites/accept; pending or accepted → removed; removed → restored as pending with a new invite", async () => {
    const email = uniqueEmail("cycle");
    const added = await add(tm.owner.cookie, tm.key, email);
    const seatId = added.body.data.seat_id;
    const accepted = await accept(t, await lastToken(t, email));
    expect(accepted.status).toBe(200);
    const userId = await userIdOf(email);
    expect(accepted.body.data).toEqual({ user_id: userId, email, license_id: tm.licenseId, product_name: expect.any(String), role: "member" });

    const removed = await remove(tm.admin.cookie, tm.key, seatId);
    expect(removed.status).toBe(200);
    expect(removed.body.data).toMatchObject({ seat_id: seatId, state: "removed", removed_at: t.clock.now().toISOString() });
    // Removing again changes nothing.
    expect((await remove(tm.owner.cookie, tm.key, seatId)).body.data.removed_at).toBe(removed.body.data.removed_at);

    t.clock.advance(1000);
    const restored = await add(tm.owner.cookie, tm.key, email);
    expect(restored.body.data).toMatchObject({ seat_id: seatId, state: "pending", user_id: null, accepted_at: null, removed_at: null, result: "restored" });
    expect((await accept(t, await lastToken(t, email))).status).toBe(200);

    // A pending seat can be removed too; its invite then stops working.
    const pendingEmail = uniqueEmail("pending");
    const pending = await add(tm.owner.cookie, tm.key, pendingEmail);
    expect((await remove(tm.owner.cookie, tm.key, pending.body.data.seat_id)).body.data.state).toBe("removed");
    expect((await accept(t, await lastToken(t, pendingEmail))).status).toBe(404);

    const listed = await list(tm.owner.cookie, tm.key);
    expect(listed.body.data.seats.map((s: { email: string; state: string }) => [s.email, s.state])).toEqual([
      [tm.admin.email, "accepted"],
      [tm.member.email, "accepted"],
      [email, "accepted"],
    ]);
    expect(listed.body.data).toMatchObject({ license_id: tm.licenseId, role: "owner", max_seats: 10, used_seats: 3 });
  });

  test("audit rows name the session's user; events carry no email", async () => {
    const email = uniqueEmail("audited");
    const added = await add(tm.admin.cookie, tm.key, email);
    await accept(t, await lastToken(t, email));
    await remove(tm.owner.cookie, tm.key, added.body.data.seat_id);
    const ownerId = await userIdOf(tm.owner.email);
    const adminId = await userIdOf(tm.admin.email);
    const rows = await auditOf(tm.licenseId);
    expect(rows.slice(-3)).toEqual([
      { action: "seat.invite", actor_type: "session", actor_id: adminId },
      { action: "seat.accept", actor_type: "session", actor_id: await userIdOf(email) },
      { action: "seat.remove", actor_type: "session", actor_id: ownerId },
    ]);
    const events = (await eventsOf(tm.licenseId)).slice(-3);
    expect(events.map((e) => e.type)).toEqual(["seat.invited", "seat.accepted", "seat.removed"]);
    expect(events[2]!.data).toMatchObject({ seat_id: added.body.data.seat_id, previous_state: "accepted", by: "portal" });
    expect(JSON.stringify(events)).not.toContain("@");
  });
});

describe("limits and validation", () => {
  test("409 SEAT_LIMIT at max_seats, counting pending invites; a removal frees room", async () => {
    const tm = await team(t, { maxSeats: 3 }); // admin + member accepted
    const pending = await add(tm.owner.cookie, tm.key, uniqueEmail("third"));
    expect(pending.status).toBe(200);
    const full = await add(tm.owner.cookie, tm.key, uniqueEmail("fourth"));
    expect(full.status).toBe(409);
    expect(full.body.error).toMatchObject({ code: "SEAT_LIMIT", details: { max_seats: 3, used_seats: 3 } });
    // Re-inviting the pending seat at the limit is fine; restoring a removed one needs room.
    expect((await add(tm.owner.cookie, tm.key, pending.body.data.email)).body.data.result).toBe("reinvited");
    await remove(tm.owner.cookie, tm.key, tm.member.seatId);
    expect((await add(tm.owner.cookie, tm.key, uniqueEmail("fifth"))).status).toBe(200);
    expect((await add(tm.owner.cookie, tm.key, tm.member.email)).status).toBe(409);
  });

  test("max_seats null is unlimited", async () => {
    const tm = await team(t, { maxSeats: null });
    for (let i = 0; i < 8; i++) expect((await add(tm.owner.cookie, tm.key, uniqueEmail(`u${i}`))).status).toBe(200);
    expect((await list(tm.owner.cookie, tm.key)).body.data).toMatchObject({ max_seats: null, used_seats: 10 });
  });

  test("400 for the owner's own address (any case) and for an invalid role; nothing is written", async () => {
    const tm = await team(t);
    const before = (await invites(t)).length;
    for (const email of [tm.owner.email, tm.owner.email.toUpperCase(), ` ${tm.owner.email}`]) {
      const res = await add(tm.owner.cookie, tm.key, email);
      if (email.startsWith(" ")) expect(res.status).toBe(400); // not a valid address either way
      else expect(res.body.error).toMatchObject({ code: "VALIDATION_ERROR", details: { fields: { email: expect.any(String) } } });
      expect(res.status).toBe(400);
    }
    for (const role of ["owner", "ADMIN", "superuser"]) {
      const res = await add(tm.owner.cookie, tm.key, uniqueEmail("role"), role);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
    }
    expect((await add(tm.owner.cookie, tm.key, "not-an-email")).status).toBe(400);
    expect((await invites(t)).length).toBe(before);
  });

  test("a seat of another license cannot be removed through this one: 404 LICENSE_NOT_FOUND", async () => {
    const a = await team(t);
    const b = await team(t);
    const res = await remove(a.owner.cookie, a.key, b.member.seatId);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("LICENSE_NOT_FOUND");
    expect((await remove(a.owner.cookie, a.key, "not-a-seat")).status).toBe(404);
    expect((await list(b.owner.cookie, b.key)).body.data.used_seats).toBe(2);
  });
});

describe("admin seat routes", () => {
  test("list includes removed seats; remove is audited with the API key and records seat.removed by admin", async () => {
    const tm = await team(t, { maxSeats: 5 });
    await remove(tm.owner.cookie, tm.key, tm.member.seatId);
    const listed = await t.request("GET", `/api/v1/admin/licenses/${tm.licenseId}/seats`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toMatchObject({ license_id: tm.licenseId, max_seats: 5, used_seats: 1 });
    expect(listed.body.data.items.map((s: { seat_id: string; state: string }) => [s.seat_id, s.state])).toEqual([
      [tm.admin.seatId, "accepted"],
      [tm.member.seatId, "removed"],
    ]);
    const removed = await t.request("POST", `/api/v1/admin/licenses/${tm.licenseId}/seats/${tm.admin.seatId}/remove`);
    expect(removed.status).toBe(200);
    expect(removed.body.data).toMatchObject({ seat_id: tm.admin.seatId, state: "removed" });
    const last = (await auditOf(tm.licenseId)).at(-1)!;
    expect(last).toMatchObject({ action: "seat.remove", actor_type: "api_key" });
    expect((await eventsOf(tm.licenseId)).at(-1)!.data).toMatchObject({ by: "admin", previous_state: "accepted" });
    // The removed admin lost their rights at once.
    expect((await list(tm.admin.cookie, tm.key)).status).toBe(404);
    // Unknown seat of this license: 404 NOT_FOUND; unknown license: 404.
    const other = await team(t);
    expect((await t.request("POST", `/api/v1/admin/licenses/${tm.licenseId}/seats/${other.admin.seatId}/remove`)).status).toBe(404);
    expect((await t.request("GET", `/api/v1/admin/licenses/01900000-0000-7000-8000-000000000000/seats`)).status).toBe(404);
  });

  test("a product-bound key sees only its product's seats", async () => {
    const tm = await team(t);
    const other = await team(t);
    const bound = await t.apiKey(["licenses:write"], tm.productId);
    expect((await t.request("GET", `/api/v1/admin/licenses/${tm.licenseId}/seats`, { key: bound })).status).toBe(200);
    const refused = await t.request("GET", `/api/v1/admin/licenses/${other.licenseId}/seats`, { key: bound });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("PRODUCT_SCOPE_MISMATCH");
    expect((await t.request("POST", `/api/v1/admin/licenses/${other.licenseId}/seats/${other.member.seatId}/remove`, { key: bound })).status).toBe(403);
  });
});

describe("seat pages (max_seats null puts no bound on them)", () => {
  test("portal and admin lists page in invite order with limit and cursor; used_seats counts every seat, not the page's", async () => {
    const tm = await team(t, { maxSeats: null });
    const invited: string[] = [];
    for (let i = 0; i < 5; i++) {
      const email = uniqueEmail(`page${i}`);
      expect((await add(tm.owner.cookie, tm.key, email)).status).toBe(200);
      invited.push(email);
      if (i % 2 === 0) t.clock.advance(1000);
    }
    const removed = (await list(tm.owner.cookie, tm.key)).body.data.seats.find((s: { email: string }) => s.email === invited[1])!;
    expect((await remove(tm.owner.cookie, tm.key, removed.seat_id)).status).toBe(200);

    // Portal: the admin and member seats of the team, then the five invites but the removed one.
    const walk = async (fetchPage: (cursor: string | null) => Promise<{ status: number; body: any }>, itemsOf: (d: any) => { email: string }[]) => {
      const seen: string[] = [];
      const used = new Set<number>();
      let cursor: string | null = null;
      for (let n = 0; n < 20; n++) {
        const res = await fetchPage(cursor);
        expect(res.status).toBe(200);
        expect(itemsOf(res.body.data).length).toBeLessThanOrEqual(2);
        seen.push(...itemsOf(res.body.data).map((s) => s.email));
        used.add(res.body.data.used_seats);
        cursor = res.body.data.next_cursor;
        if (!cursor) break;
      }
      return { seen, used: [...used] };
    };
    const portal = await walk(
      (cursor) => portalPost(t, tm.owner.cookie, "/portal/seats", { license_key: tm.key, limit: 2, ...(cursor ? { cursor } : {}) }),
      (d) => d.seats,
    );
    expect(portal.seen).toEqual([tm.admin.email, tm.member.email, ...invited.filter((e) => e !== invited[1])]);
    expect(portal.used).toEqual([6]);

    // Admin: removed seats included.
    const admin = await walk((cursor) => t.request("GET", `/api/v1/admin/licenses/${tm.licenseId}/seats?limit=2${cursor ? `&cursor=${cursor}` : ""}`), (d) => d.items);
    expect(admin.seen).toEqual([tm.admin.email, tm.member.email, ...invited]);
    expect(admin.used).toEqual([6]);

    // Bad paging input is 400.
    for (const q of ["limit=0", "limit=101", "cursor=nope"]) {
      const res = await t.request("GET", `/api/v1/admin/licenses/${tm.licenseId}/seats?${q}`);
      expect([q, res.status, res.body.error?.code]).toEqual([q, 400, "VALIDATION_ERROR"]);
    }
    const bad = await portalPost(t, tm.owner.cookie, "/portal/seats", { license_key: tm.key, cursor: "nope" });
    expect([bad.status, bad.body.error?.code]).toEqual([400, "VALIDATION_ERROR"]);
  });
});
