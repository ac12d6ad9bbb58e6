// The invite link in a real browser (Debian's Chromium through playwright-core, no outside network):
// the owner invites a seat through the portal API, the invite arrives at a real SMTP server, the link
// in it is opened, Accept is clicked, and the session cookie the page received lists the license's
// seats (issue 10 acceptance). Skipped with one line when Chromium is not installed.
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { chromium } from "playwright-core";
import { createTestApp, type TestApp } from "../support/app";
import { startSmtpServer, type TestSmtpServer } from "../support/smtp";
import { makeCatalog } from "../support/factories";
import { CHROMIUM, toolTest } from "../support/tools";

const ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"];

let t: TestApp;
let smtp: TestSmtpServer;
let origin: string;

beforeAll(async () => {
  // The invite link and the same-origin check both use BASE_URL: serve on the port it names.
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port;
  probe.stop(true);
  origin = `http://127.0.0.1:${port}`;
  smtp = await startSmtpServer();
  t = await createTestApp({ env: { PORT: String(port), BASE_URL: origin, SMTP_URL: smtp.url, MAIL_FROM: "noreply@keyward.test" } });
  t.listen();
});
afterAll(async () => {
  await t.close();
  await smtp.stop();
});

describe("the invite link in headless Chromium", () => {
  toolTest("chromium")(
    "opens the accept page, accepts on click, and the cookie it sets lists the license's seats",
    async () => {
      const { key, license } = await makeCatalog(t.deps);
      const owner = await t.signIn(license.email);
      const added = await t.request("POST", "/api/v1/portal/seats/add", { cookie: owner, body: { license_key: key, email: "Teammate@Example.com", role: "member" } });
      expect(added.status).toBe(200);
      expect((await t.request("POST", "/api/v1/admin/system/jobs/deliver-outbox/run")).status).toBe(200);
      const mail = smtp.received.at(-1)!;
      expect(mail.envelope.to).toEqual(["teammate@example.com"]);
      const link = /(http:\/\/\S+\/portal\/accept-invite#token=[0-9a-f]{64})/.exec(mail.text)?.[1];
      expect(link?.startsWith(`${origin}/portal/accept-invite#token=`)).toBe(true);

      const browser = await chromium.launch({ executablePath: CHROMIUM!, args: ARGS });
      try {
        const context = await browser.newContext({ serviceWorkers: "block" });
        const outside: string[] = [];
        await context.route("**/*", (route) => {
          if (new URL(route.request().url()).origin === origin) return route.continue();
          outside.push(route.request().url());
          return route.abort("internetdisconnected");
        });
        const page = await context.newPage();
        page.setDefaultTimeout(120_000);
        const problems: string[] = [];
        page.on("console", (m) => {
          if (m.type() === "error" || /Content Security Policy/i.test(m.text())) problems.push(`console: ${m.text()}`);
        });
        page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));

        const res = await page.goto(link!, { waitUntil: "load" });
        expect(res?.status()).toBe(200);
        // Nothing is accepted by opening the link (mail scanners open links): still pending.
        const before = (await t.request("POST", "/api/v1/portal/seats", { cookie: owner, body: { license_key: key } })).body.data.seats;
        expect(before.map((s: { email: string; state: string }) => [s.email, s.state])).toEqual([["teammate@example.com", "pending"]]);
        // The token left the address bar once read.
        expect(page.url()).toBe(`${origin}/portal/accept-invite`);

        await page.click("#accept");
        await page.waitForSelector("#status.ok");
        expect(await page.textContent("#status")).toContain("signed in as teammate@example.com");

        const cookies = await context.cookies(origin);
        const session = cookies.find((c) => c.name === "session");
        expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });

        // The browser's own session (the cookie the accept set) lists the license's seats.
        const listed = await page.evaluate(async (licenseKey) => {
          const r = await fetch("/api/v1/portal/seats", {
            method: "POST",
            credentials: "include",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ license_key: licenseKey }),
          });
          return { status: r.status, body: (await r.json()) as { data: { role: string; seats: { email: string; state: string }[] } } };
        }, key);
        expect(listed.status).toBe(200);
        expect(listed.body.data.role).toBe("member");
        expect(listed.body.data.seats.map((s: { email: string; state: string }) => [s.email, s.state])).toEqual([["teammate@example.com", "accepted"]]);

        // A second click on the same link (a reload) finds the invite used.
        const again = await context.newPage();
        await again.goto(link!, { waitUntil: "load" });
        await again.click("#accept");
        await again.waitForSelector("#status.error");
        expect(outside).toEqual([]);
        expect(problems).toEqual([]);
      } finally {
        await browser.close();
      }
    },
    180_000,
  );
});
