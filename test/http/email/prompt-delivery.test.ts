// Emails leave at once (issue 25, point 1): with the delivery worker running (JOBS on; here the
// scheduler with a cron that never fires, so no pass runs), an email written by a committed change
// reaches a real SMTP server on 127.0.0.1 within 2 s, with no job pass run by hand: a sign-in code,
// a portal seat invite after the 200, an expiry reminder after the run-expiry-checks run finishes. The worker
// records no job runs. Runs on SQLite and, with KEYWARD_TEST_ENGINE=postgres, on PostgreSQL.
import { afterEach, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { runningClock } from "../../support/running-clock";
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from "../../support/smtp";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import { portalPost, uniqueEmail } from "../portal/helpers";
import { sealedEmail } from "../../../src/modules/email/outbox";
import { emailMessage } from "../../../src/modules/outbox/effects";
import { startScheduler, type Scheduler } from "../../../src/jobs/scheduler";
import type { CronScheduler } from "../../../src/jobs/cron";
import { DAY, SECOND } from "../../../src/shared/clock";
import { runExpiryChecks } from "../../support/expiry-checks";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

/** An app with a real SMTP server and the delivery worker running (the cron never fires). */
async function setup(): Promise<{ t: TestApp; smtp: TestSmtpServer; startWorker(): Scheduler }> {
  const smtp = await startSmtpServer();
  cleanup.push(() => smtp.stop());
  const t = await createTestApp({ env: { SMTP_URL: smtp.url, MAIL_FROM: "Acme Licensing <noreply@acme.example>" }, clock: runningClock() });
  cleanup.push(() => t.close());
  const cron: CronScheduler = () => ({ stop: () => {} });
  return {
    t,
    smtp,
    startWorker() {
      const scheduler = startScheduler(t.deps, { cron });
      // Stopped before the database closes (cleanup runs last-in first-out).
      cleanup.push(() => scheduler.stop());
      return scheduler;
    },
  };
}

/** Resolves with the first mail to `to` and how long after `since` (performance.now()) it arrived; rejects after `ms`. */
async function mailTo(smtp: TestSmtpServer, to: string, since: number, ms = 10 * SECOND): Promise<{ mail: ReceivedMail; afterMs: number }> {
  for (;;) {
    const mail = smtp.received.find((m) => m.envelope.to.includes(to));
    if (mail) return { mail, afterMs: performance.now() - since };
    if (performance.now() - since > ms) throw new Error(`no mail to ${to} within ${ms} ms`);
    await Bun.sleep(10);
  }
}

test("an email written on its own goes out without a pass, and the worker records no job run", async () => {
  const { t, smtp, startWorker } = await setup();
  await t.deps.repos.users.ensure("bob@example.com", t.clock.now()); // a sign-in code is sent to users only
  startWorker();
  const since = performance.now();
  await t.deps.repos.outbox.enqueue(
    emailMessage(sealedEmail(t.deps.secrets, { template: "sign_in_code", to: "bob@example.com", at: t.clock.now(), data: { ttl_minutes: 10 }, secret: { code: "118822" } })),
  );
  const { mail, afterMs } = await mailTo(smtp, "bob@example.com", since);
  expect(mail.subject).toBe("Your sign-in code");
  expect(mail.text).toContain("118822");
  expect(afterMs).toBeLessThanOrEqual(2 * SECOND);
  const jobs = (await t.request("GET", "/api/v1/admin/system/jobs")).body.data.items;
  expect(jobs.find((j: { name: string }) => j.name === "deliver-outbox")).toMatchObject({ schedule: "continuous", fence: 0, last_result: null });
});

test("a portal seat invite reaches the SMTP server within 2 s of the 200", async () => {
  const { t, smtp, startWorker } = await setup();
  const owner = uniqueEmail("owner");
  const invitee = uniqueEmail("invitee");
  const product = await makeProduct(t.deps, { name: "Acme Editor" });
  const plan = await makePlan(t.deps, product.id, { maxSeats: 5 });
  const { key } = await makeLicense(t.deps, { productId: product.id, planId: plan.id, email: owner });
  const ownerCookie = await t.signIn(owner);
  startWorker();
  const added = await portalPost(t, ownerCookie, "/portal/seats/add", { license_key: key, email: invitee, role: "member" });
  const since = performance.now();
  expect(added.status).toBe(200);
  const { mail, afterMs } = await mailTo(smtp, invitee, since);
  expect(mail.subject).toContain("Acme Editor");
  expect(afterMs).toBeLessThanOrEqual(2 * SECOND);
});

test("an expiry reminder reaches the SMTP server within 2 s of the run-expiry-checks run finishing", async () => {
  const { t, smtp, startWorker } = await setup();
  const owner = uniqueEmail("expiring");
  const product = await makeProduct(t.deps, { name: "Acme Editor" });
  const plan = await makePlan(t.deps, product.id, { name: "Pro" });
  await makeLicense(t.deps, { productId: product.id, planId: plan.id, email: owner, validUntil: new Date(t.clock.nowMs() + 5 * DAY) });
  startWorker();
  const counts = await runExpiryChecks(t);
  const since = performance.now();
  expect(counts).toMatchObject({ expiry_reminders: 1 });
  const { mail, afterMs } = await mailTo(smtp, owner, since);
  expect(mail.subject).toContain("expires in");
  expect(afterMs).toBeLessThanOrEqual(2 * SECOND);
});
