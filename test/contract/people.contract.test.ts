// UserRepo, SessionRepo and SignInCodeRepo on every engine (issue 10): upserted users, session
// lookup by hash, sliding and ending sessions, and the atomic one-time-code check, including races
// between separate pools (separate "nodes") on PostgreSQL.
import { afterEach, expect, test } from "bun:test";
import type { Repos } from "../../src/deps";
import type { NewSession } from "../../src/modules/sessions/repo";
import { newId } from "../../src/shared/ids";
import { DAY, HOUR, MINUTE } from "../../src/shared/clock";
import { forEachEngine, type Opened } from "./harness";
import { repoFor } from "./repos";
import { AT, auditActions, audited, readRows, rejection } from "./rows";
import { withNodes } from "./nodes";
import { unitOf, withPgUnits, type Unit } from "./unit";
import { applyUserChange } from "../../src/modules/users/service";
import { guessCode, storeCode } from "../../src/modules/sign-in/service";
import type { CodeFloodCap, NewSignInCode } from "../../src/modules/sign-in/repo";
import type { Effects } from "../../src/modules/outbox/effects";
import type { AdminRole } from "../../src/modules/users/repo";

function session(userId: string, over: Partial<NewSession> = {}): NewSession {
  const id = newId();
  return {
    id,
    tokenHash: `hash-${id}`,
    userId,
    method: "otp",
    ip: "203.0.113.7",
    userAgent: "test",
    createdAt: AT,
    lastSeenAt: AT,
    idleExpiresAt: new Date(AT.getTime() + 7 * DAY),
    absoluteExpiresAt: new Date(AT.getTime() + 30 * DAY),
    ...over,
  };
}

forEachEngine("People repositories", (engine, open) => {
  let o: Opened;
  let repos: Repos;
  const setup = async () => {
    o = await open();
    repos = repoFor(o);
  };
  afterEach(() => o?.close());

  test("users: ensure creates once and returns the same row; get / findByEmail; rows locked, updated, deleted (sessions cascade)", async () => {
    await setup();
    const a = await repos.users.ensure("ann@example.com", AT);
    expect(a).toMatchObject({ email: "ann@example.com", role: null, createdAt: AT, lastSignInAt: null });
    expect(await repos.users.ensure("ann@example.com", new Date(AT.getTime() + 1000))).toEqual(a);
    expect(await repos.users.get(a.id)).toEqual(a);
    expect(await repos.users.findByEmail("ann@example.com")).toEqual(a);
    expect(await repos.users.findByEmail("nobody@example.com")).toBeNull();
    expect((await repos.users.updateRole(a.id, "support"))!.role).toBe("support");
    expect(await repos.users.updateRole(newId(), "admin")).toBeNull();
    expect(await unitOf(o)((r) => r.users.lock(a.id))).toEqual({ ...a, role: "support" });
    expect(await unitOf(o)((r) => r.users.lock(newId()))).toBeNull();
    expect(await unitOf(o)((r) => r.users.lockAdmins())).toEqual([]);
    await repos.users.touchSignIn(a.id, new Date(AT.getTime() + 5000));
    expect((await repos.users.get(a.id))!.lastSignInAt).toEqual(new Date(AT.getTime() + 5000));
    await repos.sessions.create(session(a.id));
    expect(await repos.users.delete(a.id)).toBe(true);
    expect(await repos.users.delete(a.id)).toBe(false);
    expect(await readRows(o, "sessions")).toEqual([]);
  });

  // The verbs' unit of work (users/service.ts applyUserChange) with its rule (domain.ts assertAdminRemains).
  const change = (unit: Unit, id: string, role: AdminRole | null | undefined, keepAnAdmin = true) =>
    unit((r) => applyUserChange(r, id, role, { keepAnAdmin, effects: () => audited(role === undefined ? "user.removed" : "user.role_changed") }));

  test("users: a change's unit refuses to demote or remove the last admin, allows it while another exists, and audits only what changed", async () => {
    await setup();
    const unit = unitOf(o);
    const a = await repos.users.ensure("a@example.com", AT);
    const b = await repos.users.ensure("b@example.com", AT);
    await repos.users.updateRole(a.id, "admin");
    expect(await unit((r) => r.users.lockAdmins())).toEqual([a.id]);
    expect((await rejection(change(unit, a.id, "viewer"))).code).toBe("LAST_ADMIN");
    expect((await rejection(change(unit, a.id, undefined))).code).toBe("LAST_ADMIN");
    // A refusal rolls back: nothing written.
    expect((await repos.users.get(a.id))!.role).toBe("admin");
    // Removing a non-admin is not affected; without keepAnAdmin the check is off.
    expect((await change(unit, b.id, undefined))!.after).toBeNull();
    expect(await change(unit, b.id, undefined)).toBeNull();
    const c = await repos.users.ensure("c@example.com", AT);
    await repos.users.updateRole(c.id, "admin");
    expect((await change(unit, a.id, "viewer"))!.after!.role).toBe("viewer");
    // No change: no audit row.
    expect((await change(unit, a.id, "viewer"))!.after!.role).toBe("viewer");
    expect((await repos.users.get(c.id))!.role).toBe("admin");
    expect((await change(unit, c.id, null, false))!.after!.role).toBeNull();
    expect(await auditActions(o)).toEqual(["user.removed", "user.role_changed", "user.role_changed"]);
  });

  test("users: list filters and pages newest first", async () => {
    await setup();
    for (let i = 0; i < 5; i++) {
      const u = await repos.users.ensure(`u${i}@example.com`, new Date(AT.getTime() + i * 1000));
      if (i % 2 === 0) await repos.users.updateRole(u.id, i === 0 ? "admin" : "viewer");
    }
    const all = await repos.users.list({ limit: 3 });
    expect(all.items.map((u) => u.email)).toEqual(["u4@example.com", "u3@example.com", "u2@example.com"]);
    const rest = await repos.users.list({ limit: 3, cursor: all.nextCursor! });
    expect(rest.items.map((u) => u.email)).toEqual(["u1@example.com", "u0@example.com"]);
    expect(rest.nextCursor).toBeNull();
    expect((await repos.users.list({ limit: 10, role: "admins" })).items.map((u) => u.email)).toEqual(["u4@example.com", "u2@example.com", "u0@example.com"]);
    expect((await repos.users.list({ limit: 10, role: "viewer" })).items.length).toBe(2);
    expect((await repos.users.list({ limit: 10, search: "U3@" })).items.map((u) => u.email)).toEqual(["u3@example.com"]);
    expect((await repos.users.list({ limit: 10, search: "%" })).items).toEqual([]);
  });

  test("sessions: by hash, touch, revoke one, revoke all of a user, list live ones, prune expired", async () => {
    await setup();
    const u = await repos.users.ensure("s@example.com", AT);
    const v = await repos.users.ensure("v@example.com", AT);
    const s1 = session(u.id);
    const s2 = session(u.id, { createdAt: new Date(AT.getTime() + 1) });
    const old = session(v.id, { idleExpiresAt: new Date(AT.getTime() + MINUTE) });
    for (const s of [s1, s2, old]) await repos.sessions.create(s);
    const { tokenHash: _, ...view } = s1;
    expect(await repos.sessions.findByTokenHash(s1.tokenHash)).toEqual(view);
    expect(await repos.sessions.findByTokenHash("nope")).toBeNull();
    const later = new Date(AT.getTime() + DAY);
    await repos.sessions.touch(s1.id, later, new Date(later.getTime() + 7 * DAY));
    expect((await repos.sessions.get(s1.id))!.lastSeenAt).toEqual(later);
    const live = await repos.sessions.list({ aliveAt: new Date(AT.getTime() + 2 * MINUTE), limit: 10 });
    expect(live.items.map((s) => s.id)).toEqual([s2.id, s1.id]);
    expect((await repos.sessions.list({ aliveAt: AT, userId: v.id, limit: 10 })).items.map((s) => s.id)).toEqual([old.id]);
    expect((await repos.sessions.revoke(s2.id))!.id).toBe(s2.id);
    expect(await repos.sessions.revoke(s2.id)).toBeNull();
    expect(await repos.sessions.pruneExpired(new Date(AT.getTime() + 2 * MINUTE), 0)).toBe(0);
    expect(await repos.sessions.pruneExpired(new Date(AT.getTime() + 2 * MINUTE), 1000)).toBe(1);
    expect(await repos.sessions.revokeAllForUser(u.id)).toBe(1);
    expect(await readRows(o, "sessions")).toEqual([]);
  });

  const code = (attemptHash: string, codeHash: string, email = "c@example.com", at = AT) => ({
    attemptHash,
    email,
    codeHash,
    createdAt: at,
    expiresAt: new Date(at.getTime() + 10 * MINUTE),
  });
  const cap = (max = 20, since = new Date(AT.getTime() - HOUR)) => ({ replaces: null, cap: { max, since } });
  // The sign-in verbs' units of work (sign-in/service.ts storeCode, guessCode).
  const put = (unit: Unit, c: NewSignInCode, opts: { replaces: string | null; cap: CodeFloodCap }, effects: Effects) => unit((r) => storeCode(r, c, opts, effects));
  const check = (unit: Unit, attempt: string, codeHash: string, now: Date, max: number) => unit((r) => guessCode(r, attempt, codeHash, now, max));

  test("sign-in codes: check consumes on a match, counts misses, honours expiry, per attempt", async () => {
    await setup();
    expect(await put(unitOf(o), code("a1", "h1"), cap(), {})).toBe("ok");
    expect(await check(unitOf(o), "a1", "h0", AT, 5)).toBe("invalid");
    expect(await check(unitOf(o), "a1", "h1", AT, 5)).toBe("ok");
    expect(await check(unitOf(o), "a1", "h1", AT, 5)).toBe("invalid");
    // Another attempt's code (same address) is not this attempt's; an unknown attempt is invalid.
    await put(unitOf(o), code("a2", "h2"), cap(), {});
    await put(unitOf(o), code("a3", "h3"), cap(), {});
    expect(await check(unitOf(o), "a2", "h3", AT, 5)).toBe("invalid");
    expect(await check(unitOf(o), "nobody", "h3", AT, 5)).toBe("invalid");
    // Exhausting a2 leaves a3 alive.
    for (let i = 0; i < 5; i++) expect(await check(unitOf(o), "a2", "bad", AT, 5)).toBe("invalid");
    expect(await check(unitOf(o), "a2", "h2", AT, 5)).toBe("invalid");
    expect(await check(unitOf(o), "a3", "h3", AT, 5)).toBe("ok");
    await put(unitOf(o), code("a4", "h4"), cap(), {});
    expect(await check(unitOf(o), "a4", "h4", new Date(AT.getTime() + 10 * MINUTE), 5)).toBe("invalid");
    expect(await check(unitOf(o), "a4", "h4", new Date(AT.getTime() + 10 * MINUTE - 1), 5)).toBe("ok");
  });

  test("sign-in codes: put ends the replaced attempt; the cap counts every code since `since`; prune keeps an hour", async () => {
    await setup();
    await put(unitOf(o), code("old", "h1"), cap(), {});
    expect(await put(unitOf(o), code("new", "h2"), { replaces: "old", cap: { max: 20, since: new Date(AT.getTime() - HOUR) } }, {})).toBe("ok");
    expect(await check(unitOf(o), "old", "h1", AT, 5)).toBe("invalid");
    expect(await check(unitOf(o), "new", "h2", AT, 5)).toBe("ok");
    // Spent and replaced codes count: 2 made, cap 3 allows one more, then the refusal (with the oldest code's time) writes nothing.
    expect(await put(unitOf(o), code("third", "h3"), cap(3), { emails: [{ template: "sign_in_code", to: "c@example.com", data: {}, at: AT }] })).toBe("ok");
    expect(await put(unitOf(o), code("fourth", "h4"), cap(3), { emails: [{ template: "sign_in_code", to: "c@example.com", data: {}, at: AT }] })).toEqual({ floodedSince: AT });
    expect((await readRows(o, "signInCodes")).length).toBe(3);
    expect((await readRows(o, "outbox")).length).toBe(1);
    // Another address has its own count; codes older than `since` do not count.
    expect(await put(unitOf(o), code("other", "h5", "d@example.com"), cap(3), {})).toBe("ok");
    expect(await put(unitOf(o), code("later", "h6"), { replaces: null, cap: { max: 3, since: AT } }, {})).toBe("ok");
    // Prune: rows created an hour or more before now go; younger ones (expired or not) stay.
    expect(await repos.signInCodes.pruneExpired(new Date(AT.getTime() + HOUR - 1), 1000)).toBe(0);
    // One batch deletes at most its limit; the pass calls again until a batch comes back short.
    expect(await repos.signInCodes.pruneExpired(new Date(AT.getTime() + HOUR), 2)).toBe(2);
    expect(await repos.signInCodes.pruneExpired(new Date(AT.getTime() + HOUR), 1000)).toBe(3);
    expect(await readRows(o, "signInCodes")).toEqual([]);
  });

  test("sign-in codes: put writes its effects (the email) in the same change", async () => {
    await setup();
    await put(unitOf(o), 
      { attemptHash: "m", email: "m@example.com", codeHash: "h", createdAt: AT, expiresAt: new Date(AT.getTime() + MINUTE) },
      cap(),
      { emails: [{ template: "sign_in_code", to: "m@example.com", data: { ttl_minutes: 10 }, sealed: "v1.x.y", at: AT }] },
    );
    const rows = await readRows(o, "outbox");
    expect(rows.map((r) => [r.kind, r.topic])).toEqual([["email", "sign_in_code"]]);
  });

  if (engine === "postgres") {
    test("race: 24 ensures of one address across 3 nodes make one user", async () => {
      await setup();
      const users = await withNodes(o, 3, (nodes) => Promise.all(Array.from({ length: 24 }, (_, i) => nodes[i % 3]!.users.ensure("race@example.com", AT))));
      expect(new Set(users.map((u) => u.id)).size).toBe(1);
      expect((await readRows(o, "users")).length).toBe(1);
    });

    test("race: two admins demoting each other at once from different nodes leave exactly one admin", async () => {
      await setup();
      for (let round = 0; round < 5; round++) {
        const x = await repos.users.ensure(`x${round}@example.com`, AT);
        const y = await repos.users.ensure(`y${round}@example.com`, AT);
        await repos.users.updateRole(x.id, "admin");
        await repos.users.updateRole(y.id, "admin");
        const outcomes = await withPgUnits(o, 2, (units) => Promise.allSettled([change(units[0]!, x.id, null), change(units[1]!, y.id, null)]));
        expect(outcomes.filter((r) => r.status === "fulfilled").length).toBe(1);
        expect((await repos.users.list({ role: "admin", limit: 10 })).items.length).toBe(1);
        // Back to no admin for the next round.
        const [left] = (await repos.users.list({ role: "admin", limit: 10 })).items;
        await repos.users.updateRole(left!.id, null);
      }
    });

    test("race: 30 wrong guesses across 3 nodes count exactly 5 attempts; the right code is then dead", async () => {
      await setup();
      await put(unitOf(o), code("g", "right", "g@example.com"), cap(), {});
      await withPgUnits(o, 3, (units) => Promise.all(Array.from({ length: 30 }, (_, i) => check(units[i % 3]!, "g", `wrong-${i}`, AT, 5))));
      expect((await readRows(o, "signInCodes"))[0]!.attempts).toBe(5);
      expect(await check(unitOf(o), "g", "right", AT, 5)).toBe("invalid");
    });

    test("race: the right code checked 12 times across 3 nodes signs in exactly once", async () => {
      await setup();
      await put(unitOf(o), code("once", "right", "once@example.com"), cap(), {});
      const verdicts = await withPgUnits(o, 3, (units) => Promise.all(Array.from({ length: 12 }, (_, i) => check(units[i % 3]!, "once", "right", AT, 5))));
      expect(verdicts.filter((v) => v === "ok").length).toBe(1);
    });

    test("race: 30 code requests for one address across 3 nodes store exactly the cap's 12", async () => {
      await setup();
      const outcomes = await withPgUnits(o, 3, (units) => Promise.all(Array.from({ length: 30 }, (_, i) => put(units[i % 3]!, code(`r${i}`, "h", "race@example.com"), cap(12), {}))));
      expect(outcomes.filter((v) => v === "ok").length).toBe(12);
      expect((await readRows(o, "signInCodes")).length).toBe(12);
    });
  }
});
