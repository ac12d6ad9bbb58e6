// Issue acceptance, end to end: an owner's invite is delivered by the deliver-outbox pass to a real
// SMTP server on 127.0.0.1; the link in the received email (as a browser would follow it: the token
// from its fragment, posted by the accept page) accepts the invite; the cookie it sets lists the
// license's seats. Runs on SQLite and, with KEYWARD_TEST_ENGINE=postgres, on PostgreSQL.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { startSmtpServer, type TestSmtpServer } from "../../support/smtp";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import { accept, cookieOf, portalPost, uniqueEmail } from "./helpers";

let smtp: TestSmtpServer;
let t: TestApp;
beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({ label: "invite-smtp", env: { SMTP_URL: smtp.url, MAIL_FROM: "Acme Licensing <noreply@acme.example>" } });
});
afterAll(async () => {
  await t?.close();
  await smtp?.stop();
});

test("the invite arrives by SMTP, its link accepts it, and the cookie it sets lists the license's seats", async () => {
  const owner = uniqueEmail("owner");
  const invitee = uniqueEmail("invitee");
  const product = await makeProduct(t.deps, { name: "Acme Editor" });
  const plan = await makePlan(t.deps, product.id, { maxSeats: 5 });
  const { license, key } = await makeLicense(t.deps, { productId: product.id, planId: plan.id, email: owner });
  const ownerCookie = await t.signIn(owner);
  const added = await portalPost(t, ownerCookie, "/portal/seats/add", { license_key: key, email: invitee, role: "member" });
  expect(added.status).toBe(200);

  const run = await t.request("POST", "/api/v1/admin/system/jobs/deliver-outbox/run");
  expect(run.status).toBe(200);
  const mail = smtp.received.find((m) => m.envelope.to.includes(invitee));
  expect(mail).toBeDefined();
  expect(mail!.subject).toContain("Acme Editor");
  const link = /https?:\/\/\S+\/portal\/accept-invite#token=[0-9a-f]{64}/.exec(mail!.text)?.[0];
  expect(link).toBeDefined();
  expect(mail!.html).toContain(link!);
  expect(link!.startsWith(`${t.deps.config.baseUrl}/portal/accept-invite#token=`)).toBe(true);

  // The page the link opens is served; its script posts the fragment's token (test: accept-page.test.ts).
  const url = new URL(link!);
  expect((await t.request("GET", url.pathname, { key: null })).status).toBe(200);
  const token = new URLSearchParams(url.hash.slice(1)).get("token")!;
  const accepted = await accept(t, token);
  expect(accepted.status).toBe(200);
  expect(accepted.body.data).toMatchObject({ email: invitee, license_id: license.id, product_name: "Acme Editor", role: "member" });

  const seats = await portalPost(t, cookieOf(accepted), "/portal/seats", { license_key: key });
  expect(seats.status).toBe(200);
  expect(seats.body.data).toMatchObject({ license_id: license.id, role: "member", max_seats: 5, used_seats: 1 });
  expect(seats.body.data.seats).toEqual([expect.objectContaining({ email: invitee, state: "accepted", role: "member" })]);
  // The link works once.
  expect((await accept(t, token)).status).toBe(404);
});
