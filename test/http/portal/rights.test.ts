// The portal rights matrix, table-driven: every portal route × every caller (owner, accepted admin,
// pending admin, accepted member, removed seat, unrelated user, signed out). A refused signed-in
// caller always gets the one 404 LICENSE_NOT_FOUND (the same body as a missing license); signed out
// is 401; a cross-site write with a valid cookie is refused.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import { post } from "../../support/license-api";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import { clearOfflineActivation } from "../../../src/modules/offline/service";
import { accept, lastToken, portalGet, portalPost, signIn, team, uniqueEmail, type Team } from "./helpers";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ label: "portal-rights" });
});
afterAll(() => t.close());
beforeEach(() => t.clock.advance(2 * 60_000));

type Caller = "owner" | "acceptedAdmin" | "pendingAdmin" | "acceptedMember" | "removedSeat" | "unrelated" | "signedOut";
const CALLERS: Caller[] = ["owner", "acceptedAdmin", "pendingAdmin", "acceptedMember", "removedSeat", "unrelated", "signedOut"];

interface World {
  tm: Team;
  cookies: Record<Caller, string | null>;
  /** A pending seat to remove, created fresh per case. */
  freshSeat(): Promise<string>;
  /** An activation on the license, created fresh per case. */
  freshActivation(): Promise<string>;
}

async function world(): Promise<World> {
  const tm = await team(t, { maxSeats: null, maxActivations: 50 });
  const pendingEmail = uniqueEmail("pending-admin");
  await portalPost(t, tm.owner.cookie, "/portal/seats/add", { license_key: tm.key, email: pendingEmail, role: "admin" });
  const removedEmail = uniqueEmail("removed");
  const removedAdd = await portalPost(t, tm.owner.cookie, "/portal/seats/add", { license_key: tm.key, email: removedEmail, role: "admin" });
  const removedAccept = await accept(t, await lastToken(t, removedEmail));
  expect(removedAccept.status).toBe(200);
  await portalPost(t, tm.owner.cookie, "/portal/seats/remove", { license_key: tm.key, seat_id: removedAdd.body.data.seat_id });
  let n = 0;
  return {
    tm,
    cookies: {
      owner: tm.owner.cookie,
      acceptedAdmin: tm.admin.cookie,
      // Signed in (e.g. by a one-time code) with the invited address, but the invite is not accepted.
      pendingAdmin: await signIn(t, pendingEmail),
      acceptedMember: tm.member.cookie,
      removedSeat: removedAccept.headers.get("set-cookie")!.split(";")[0]!,
      unrelated: await signIn(t, uniqueEmail("stranger")),
      signedOut: null,
    },
    async freshSeat() {
      const res = await portalPost(t, tm.owner.cookie, "/portal/seats/add", { license_key: tm.key, email: uniqueEmail(`victim${++n}`) });
      return res.body.data.seat_id as string;
    },
    async freshActivation() {
      const res = await post(t, "/license/activate", { license_key: tm.key, identifier: `dev-${++n}-${Math.random()}` });
      expect(res.status).toBe(200);
      const list = await portalPost(t, tm.owner.cookie, "/portal/activations", { license_key: tm.key });
      return list.body.data.items.at(-1).activation_id as string;
    },
  };
}

type Outcome = 200 | 401 | 404;
interface Route {
  name: string;
  call(w: World, cookie: string | null): Promise<{ status: number; body: any }>;
  allowed: Record<Caller, Outcome>;
}

const viewers: Record<Caller, Outcome> = { owner: 200, acceptedAdmin: 200, pendingAdmin: 404, acceptedMember: 200, removedSeat: 404, unrelated: 404, signedOut: 401 };
const managers: Record<Caller, Outcome> = { ...viewers, acceptedMember: 404 };

const ROUTES: Route[] = [
  { name: "POST /portal/seats", allowed: viewers, call: (w, c) => portalPost(t, c, "/portal/seats", { license_key: w.tm.key }) },
  {
    name: "POST /portal/seats/add",
    allowed: managers,
    call: (w, c) => portalPost(t, c, "/portal/seats/add", { license_key: w.tm.key, email: uniqueEmail("added") }),
  },
  {
    name: "POST /portal/seats/remove",
    allowed: managers,
    call: async (w, c) => portalPost(t, c, "/portal/seats/remove", { license_key: w.tm.key, seat_id: await w.freshSeat() }),
  },
  { name: "POST /portal/activations", allowed: viewers, call: (w, c) => portalPost(t, c, "/portal/activations", { license_key: w.tm.key }) },
  {
    name: "POST /portal/activations/deactivate",
    allowed: managers,
    call: async (w, c) => portalPost(t, c, "/portal/activations/deactivate", { license_key: w.tm.key, activation_id: await w.freshActivation() }),
  },
  { name: "POST /portal/offline-activation", allowed: viewers, call: (w, c) => portalPost(t, c, "/portal/offline-activation", { license_key: w.tm.key }) },
  {
    name: "POST /portal/offline-activation/activate",
    allowed: managers,
    // One per license: the previous case's activation is cleared (as an admin would) first.
    call: async (w, c) => {
      const live = await t.deps.repos.offlineTokens.findLive(w.tm.licenseId);
      if (live) await clearOfflineActivation(t.deps, SYSTEM_ACTOR, w.tm.licenseId, live.id);
      return portalPost(t, c, "/portal/offline-activation/activate", { license_key: w.tm.key, identifier: `offline-${Math.random()}` });
    },
  },
  {
    name: "POST /portal/offline-activation/license-file",
    allowed: viewers,
    call: async (w, c) => {
      if (!(await t.deps.repos.offlineTokens.findLive(w.tm.licenseId))) {
        await portalPost(t, w.tm.owner.cookie, "/portal/offline-activation/activate", { license_key: w.tm.key, identifier: "offline-file" });
      }
      return portalPost(t, c, "/portal/offline-activation/license-file", { license_key: w.tm.key });
    },
  },
];

let w: World;
let notFoundBody: unknown;
beforeAll(async () => {
  w = await world();
  const stranger = await signIn(t, uniqueEmail("prober"));
  // The body every refusal must match: the answer for a key that does not exist.
  notFoundBody = (await portalPost(t, stranger, "/portal/seats", { license_key: "KW-AAAAAAAA-BBBBBBBB-CCCCCCCC-DDDDDDDD" })).body;
});

describe("portal rights matrix", () => {
  for (const route of ROUTES) {
    for (const caller of CALLERS) {
      const expected = route.allowed[caller];
      test(`${route.name} as ${caller} → ${expected}`, async () => {
        const res = await route.call(w, w.cookies[caller]);
        expect({ caller, status: res.status }).toEqual({ caller, status: expected });
        if (expected === 404) expect(res.body).toEqual(notFoundBody);
        if (expected === 401) expect(res.body.error.code).toBe("UNAUTHORIZED");
      });
    }
  }

  test("GET /portal/licenses lists owner and accepted seats only, with each caller's role", async () => {
    const roles: Record<Caller, string | null | 401> = {
      owner: "owner",
      acceptedAdmin: "admin",
      pendingAdmin: null,
      acceptedMember: "member",
      removedSeat: null,
      unrelated: null,
      signedOut: 401,
    };
    for (const caller of CALLERS) {
      const res = await portalGet(t, w.cookies[caller], "/portal/licenses");
      if (roles[caller] === 401) {
        expect({ caller, status: res.status }).toEqual({ caller, status: 401 });
        continue;
      }
      expect({ caller, status: res.status }).toEqual({ caller, status: 200 });
      const mine = res.body.data.items.filter((l: { license_id: string }) => l.license_id === w.tm.licenseId);
      expect({ caller, roles: mine.map((l: { role: string }) => l.role) }).toEqual({ caller, roles: roles[caller] === null ? [] : [roles[caller]] });
    }
  });

  test("a missing license is the same 404 for the owner of another license", async () => {
    const res = await portalPost(t, w.tm.owner.cookie, "/portal/seats/add", { license_key: "not a key", email: uniqueEmail("x") });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(notFoundBody);
  });

  test("a cross-site POST with a valid session cookie is refused and changes nothing", async () => {
    const email = uniqueEmail("csrf");
    for (const headers of [{ origin: "https://evil.example" }, { origin: "null" }]) {
      const res = await portalPost(t, w.tm.owner.cookie, "/portal/seats/add", { license_key: w.tm.key, email }, headers);
      expect(res.status).toBe(403);
    }
    const seats = await portalPost(t, w.tm.owner.cookie, "/portal/seats", { license_key: w.tm.key });
    expect(seats.body.data.seats.some((s: { email: string }) => s.email === email)).toBe(false);
  });

  test("a license of another owner is never reachable, even with its real key", async () => {
    const product = await makeProduct(t.deps);
    const plan = await makePlan(t.deps, product.id);
    const { key } = await makeLicense(t.deps, { productId: product.id, planId: plan.id, email: uniqueEmail("someone") });
    for (const path of ["/portal/seats", "/portal/activations"]) {
      const res = await portalPost(t, w.tm.owner.cookie, path, { license_key: key });
      expect(res.body).toEqual(notFoundBody);
    }
  });
});
