// Prompt delivery: with the scheduler running (JOBS on), a nudge after a change runs deliver-outbox
// at once through the job lease, without waiting for the next cron slot. The timer is fired by hand.
import { afterEach, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { startSmtpServer, type TestSmtpServer } from "../../support/smtp";
import { sealedEmail } from "../../../src/modules/email/outbox";
import { emailMessage } from "../../../src/modules/outbox/effects";
import { createOutboxNudger, type Later } from "../../../src/modules/outbox/nudge";
import { startScheduler, type CronScheduler } from "../../../src/jobs/scheduler";

let t: TestApp | undefined;
let smtp: TestSmtpServer | undefined;
afterEach(async () => {
  await t?.close();
  await smtp?.stop();
});

test("a nudge delivers a sign-in code through the scheduler's lease, between cron slots", async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({ env: { SMTP_URL: smtp.url, MAIL_FROM: "noreply@acme.example" } });
  const timers: (() => void)[] = [];
  const later: Later = (fn) => (timers.push(fn), { cancel: () => {} });
  t.deps.outboxNudge = createOutboxNudger({ later });
  // Cron never fires in this test: only the nudge can deliver.
  const cron: CronScheduler = () => ({ stop: () => {} });

  await t.deps.repos.users.ensure("bob@example.com", t.clock.now()); // a sign-in code is sent to users only
  await t.deps.repos.outbox.enqueue(
    emailMessage(sealedEmail(t.deps.secrets, { template: "sign_in_code", to: "bob@example.com", at: t.clock.now(), data: { ttl_minutes: 10 }, secret: { code: "118822" } })),
  );
  // Before the scheduler runs (JOBS off), a nudge does nothing.
  t.deps.outboxNudge.nudge();
  expect(timers).toHaveLength(0);

  const scheduler = startScheduler(t.deps, { cron });
  t.deps.outboxNudge.nudge();
  expect(timers).toHaveLength(1);
  timers.shift()!();
  // stop() waits for the nudged pass in flight.
  await scheduler.stop();

  expect(smtp.received.map((m) => [m.envelope.to, m.subject])).toEqual([[["bob@example.com"], "Your sign-in code"]]);
  expect(smtp.received[0]!.text).toContain("118822");
  const jobs = (await t.request("GET", "/api/v1/admin/system/jobs")).body.data.items;
  expect(jobs.find((j: { name: string }) => j.name === "deliver-outbox")).toMatchObject({
    running: false,
    fence: 1,
    last_slot_at: null,
    last_result: { trigger: "nudge", status: "ok", result: { claimed: 1, sent: 1, logged: 0, retried: 0, gave_up: 0, lost: 0 } },
  });
  // Stopped with the scheduler.
  t.deps.outboxNudge.nudge();
  expect(timers).toHaveLength(0);
});
