// Knowing an address is not enough to keep its owner from signing in (issue 25 point 3;
// docs/sign-in.md, "What an attacker can still do"). Over a real listening server: an attacker who
// rotates client addresses (a trusted proxy's X-Forwarded-For) sends wrong guesses and code requests
// for an admin's address before and after the admin asks for a code; the admin's own browser (its own
// cookie jar, its own client address) still gets its code by SMTP, signs in with it, and can ask for
// a fresh one and sign in again. Before the fix, 6 guesses a minute from 6 addresses burned the
// owner's code (429, then dead) and 3 requests a minute stopped the owner from getting a new one.
// Runs on SQLite and, with KEYWARD_TEST_ENGINE=postgres, on PostgreSQL.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { startSmtpServer, type TestSmtpServer } from "../../support/smtp";

const OWNER = "boss@keyward.test";
let smtp: TestSmtpServer;
let t: TestApp;
let base: string;

beforeAll(async () => {
  smtp = await startSmtpServer();
  // One proxy in front (TRUST_PROXY=1): the client is the right-most X-Forwarded-For entry.
  t = await createTestApp({ env: { SMTP_URL: smtp.url, MAIL_FROM: "Keyward <noreply@keyward.test>", TRUST_PROXY: "1", ADMIN_EMAILS: OWNER } });
  base = `${t.listen().url}/api/v1`;
});
afterAll(async () => {
  await t.close();
  await smtp.stop();
});

/** A browser: a cookie jar (name → value) and the client address the proxy reports for it. */
class Browser {
  readonly jar = new Map<string, string>();
  constructor(readonly ip: string) {}

  async post(path: string, body: unknown): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = { "content-type": "application/json", origin: t.origin, "x-forwarded-for": this.ip };
    if (this.jar.size) headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      if (attrs.some((a) => a.trim() === "Max-Age=0")) this.jar.delete(name);
      else this.jar.set(name, pair!.slice(eq + 1));
    }
    return { status: res.status, body: await res.json() };
  }
  get(path: string) {
    const cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join("; ");
    return fetch(`${base}${path}`, { headers: { cookie, "x-forwarded-for": this.ip } });
  }
}

let attackerSeq = 0;
/** A fresh attacker client address (and so a fresh browser) for every request. */
const attacker = () => {
  const n = ++attackerSeq;
  return new Browser(`198.18.${n >> 8}.${n & 255}`);
};

async function deliver() {
  const res = await fetch(`${base}/admin/system/jobs/deliver-outbox/run`, { method: "POST", headers: { authorization: `Bearer ${t.adminKey}` } });
  expect(res.status).toBe(200);
}

/** The owner asks for a code and reads it from the one email that then arrives. */
async function ownerGetsCode(owner: Browser): Promise<string> {
  await deliver(); // the attacker's codes land in the owner's inbox first
  const before = smtp.received.length;
  const asked = await owner.post("/auth/otp/request", { email: OWNER });
  expect(asked.status).toBe(200);
  await deliver();
  const mails = smtp.received.slice(before);
  expect(mails.map((m) => m.envelope.to)).toEqual([[OWNER]]);
  return /\b(\d{6})\b/.exec(mails[0]!.text)![1]!;
}

/**
 * What an attacker who knows the address does: code requests and wrong guesses, each from a new
 * client address. Only the owner's outcomes are asserted; the attacker's answers are tallied.
 */
async function attack(requests: number, guesses: number): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  const note = (r: { status: number }) => (statuses[r.status] = (statuses[r.status] ?? 0) + 1);
  for (let i = 0; i < requests; i++) {
    const a = attacker();
    note(await a.post("/auth/otp/request", { email: OWNER }));
    // Guessing at its own attempt's code (which went to the owner's inbox): up to 5, then dead.
    for (let g = 0; g < 5; g++) note(await a.post("/auth/otp/verify", { email: OWNER, code: `${g}${g}${g}${g}${g}${g}` }));
  }
  // Guesses without any attempt cookie, each from another client address.
  for (let i = 0; i < guesses; i++) note(await attacker().post("/auth/otp/verify", { email: OWNER, code: String(i).padStart(6, "0") }));
  return statuses;
}

test("an attacker rotating client addresses can neither burn nor block the admin's sign-in", async () => {
  const owner = new Browser("192.0.2.10");
  const attacks = [await attack(6, 30)];
  const code = await ownerGetsCode(owner);
  attacks.push(await attack(6, 30));
  const signed = await owner.post("/auth/otp/verify", { email: OWNER, code });
  expect(signed.status).toBe(200);
  expect(signed.body.data.user).toMatchObject({ email: OWNER, role: "admin" });
  expect(owner.jar.has("session")).toBe(true);
  expect(owner.jar.has("sign_in_attempt")).toBe(false);
  expect((await owner.get("/auth/me")).status).toBe(200);

  // Still under attack, the owner asks for a fresh code (another device: a new jar) and signs in with it.
  const laptop = new Browser("192.0.2.11");
  attacks.push(await attack(4, 20));
  const fresh = await ownerGetsCode(laptop);
  attacks.push(await attack(0, 20));
  expect((await laptop.post("/auth/otp/verify", { email: OWNER, code: fresh })).status).toBe(200);

  // Nothing the attacker sent was refused for a limit either (every client address is fresh, and the
  // 16 code requests with the owner's 2 stay under the address's cap of 20 an hour): the owner got
  // through although the attack went on unhindered.
  expect(attacks).toEqual([
    { 200: 6, 400: 60 },
    { 200: 6, 400: 60 },
    { 200: 4, 400: 40 },
    { 400: 20 },
  ]);
}, 60_000);
