// Helpers for the portal, seat and invite tests: signed-in requests, invite emails read back from the
// outbox (their sealed link opened), and a license with an owner, an accepted admin and a member.
import type { TestApp, TestResponse } from "../../support/app";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import type { Plan } from "../../../src/modules/plans/repo";
import { openEmail } from "../../../src/modules/email/outbox";

/** A session cookie (`session=…`) for `email`, through the sessions core's test helper. */
export async function signIn(t: TestApp, email: string): Promise<string> {
  return await t.signIn(email);
}

/** A same-origin POST to /api/v1`path` with the cookie (null: signed out). */
export function portalPost<T = any>(t: TestApp, cookie: string | null, path: string, body: unknown, headers: Record<string, string> = {}): Promise<TestResponse<T>> {
  return t.request("POST", `/api/v1${path}`, {
    body,
    key: null,
    headers: { origin: t.deps.config.baseUrl, ...(cookie ? { cookie } : {}), ...headers },
  });
}

export function portalGet<T = any>(t: TestApp, cookie: string | null, path: string): Promise<TestResponse<T>> {
  return t.request("GET", `/api/v1${path}`, { key: null, headers: cookie ? { cookie } : {} });
}

export function accept<T = any>(t: TestApp, token: unknown, headers: Record<string, string> = {}): Promise<TestResponse<T>> {
  return t.request("POST", "/api/v1/invites/accept", { body: { token }, key: null, headers: { origin: t.deps.config.baseUrl, ...headers } });
}

export interface SentInvite {
  to: string;
  data: Record<string, unknown>;
  acceptUrl: string;
  token: string;
}

/** Every seat_invite email in the outbox, oldest first, with the sealed link opened. */
export async function invites(t: TestApp): Promise<SentInvite[]> {
  const rows = await t.exec<{ payload: unknown }>("SELECT payload FROM outbox WHERE kind = 'email' AND topic = 'seat_invite' ORDER BY created_at, id");
  return rows.map((r) => {
    const payload = typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload;
    const opened = openEmail(t.deps.secrets, payload);
    const acceptUrl = opened.secret.accept_url!;
    return { to: opened.to, data: opened.data, acceptUrl, token: /#token=([0-9a-f]{64})$/.exec(acceptUrl)![1]! };
  });
}

/** The token of the newest invite sent to `email`. */
export async function lastToken(t: TestApp, email: string): Promise<string> {
  const mine = (await invites(t)).filter((i) => i.to === email);
  if (mine.length === 0) throw new Error(`no invite sent to ${email}`);
  return mine[mine.length - 1]!.token;
}

let seq = 0;
export const uniqueEmail = (name: string) => `${name}-${++seq}-${Math.random().toString(36).slice(2, 8)}@example.com`;

export interface Team {
  licenseId: string;
  productId: string;
  key: string;
  owner: { email: string; cookie: string };
  admin: { email: string; cookie: string; seatId: string };
  member: { email: string; cookie: string; seatId: string };
}

/** Invites `email` as `role` (by the owner's cookie) and accepts; returns the seat id and the accept's cookie. */
export async function seatAccepted(t: TestApp, key: string, ownerCookie: string, email: string, role: "admin" | "member"): Promise<{ seatId: string; cookie: string }> {
  const added = await portalPost(t, ownerCookie, "/portal/seats/add", { license_key: key, email, role });
  if (added.status !== 200) throw new Error(`add ${email}: ${added.status} ${added.text}`);
  const res = await accept(t, await lastToken(t, email));
  if (res.status !== 200) throw new Error(`accept ${email}: ${res.status} ${res.text}`);
  return { seatId: added.body.data.seat_id, cookie: cookieOf(res) };
}

/** `session=…` from a response's Set-Cookie. */
export function cookieOf(res: TestResponse): string {
  const set = res.headers.get("set-cookie");
  if (!set) throw new Error("no set-cookie");
  return set.split(";")[0]!;
}

/** A license with its owner signed in and an accepted admin and member seat. */
export async function team(t: TestApp, planOver: Partial<Plan> = {}): Promise<Team> {
  const ownerEmail = uniqueEmail("owner");
  const product = await makeProduct(t.deps);
  const plan = await makePlan(t.deps, product.id, planOver);
  // Mixed case on purpose: the owner is the license email matched case-insensitively.
  const { license, key } = await makeLicense(t.deps, { productId: product.id, planId: plan.id, email: ownerEmail.toUpperCase() });
  const owner = { email: ownerEmail, cookie: await signIn(t, ownerEmail) };
  const adminEmail = uniqueEmail("admin");
  const memberEmail = uniqueEmail("member");
  const admin = { email: adminEmail, ...(await seatAccepted(t, key, owner.cookie, adminEmail, "admin")) };
  const member = { email: memberEmail, ...(await seatAccepted(t, key, owner.cookie, memberEmail, "member")) };
  return { licenseId: license.id, productId: license.productId, key, owner, admin, member };
}
