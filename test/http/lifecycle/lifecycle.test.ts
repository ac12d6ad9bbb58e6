// The lifecycle pass through the real app (POST /admin/system/run-expiry-checks) with the injected
// clock: each transition, each reminder once, a renewed license reminded again, two runs in a row
// sending nothing new, pages smaller than the work, and the emails arriving at a real SMTP server
// once each. Runs on SQLite and, with KEYWARD_TEST_ENGINE=postgres, on PostgreSQL.
import { afterEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { startSmtpServer, type TestSmtpServer } from "../../support/smtp";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import { DAY, HOUR, MINUTE } from "../../../src/shared/clock";
import { runLifecycle } from "../../../src/modules/lifecycle/service";
import { runPass } from "../../../src/jobs/runner";
import { pollRun, runExpiryChecks } from "../../support/expiry-checks";
import type { Plan } from "../../../src/modules/plans/repo";
import type { LicensePatch } from "../../../src/modules/licenses/repo";
import { changeLicenseNow } from "../../support/license-change";

const V1 = "/api/v1";
const T0 = new Date("2026-11-21T08:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await createTestApp({ env });
  cleanup.push(() => t.close());
  t.clock.set(T0);
  return t;
}

async function smtpServer(): Promise<TestSmtpServer> {
  const s = await startSmtpServer();
  cleanup.push(() => s.stop());
  return s;
}

/** The pass through POST /admin/system/run-expiry-checks (202), polled until its counts are in. */
const run = (t: TestApp): Promise<Record<string, number>> => runExpiryChecks(t);

async function license(t: TestApp, plan: Partial<Plan>, input: { validUntil?: Date | null; supportUntil?: Date | null } = {}) {
  const product = await makeProduct(t.deps, { name: "Acme Editor" });
  const p = await makePlan(t.deps, product.id, { name: "Pro", ...plan });
  const { license } = await makeLicense(t.deps, { productId: product.id, planId: p.id, ...input });
  return license;
}

async function patch(t: TestApp, id: string, p: LicensePatch) {
  await changeLicenseNow(t.deps, id, () => p, t.clock.now(), () => ({}));
}

async function status(t: TestApp, id: string): Promise<string> {
  const res = await t.request("GET", `${V1}/admin/licenses/${id}`);
  expect(res.status).toBe(200);
  return res.body.data.status;
}

const json = (v: unknown) => (typeof v === "string" ? JSON.parse(v) : v) as Record<string, any>;

/** The outbox emails (template, license id, data) in insertion order. */
async function emails(t: TestApp, licenseId?: string) {
  const rows = await t.exec<{ topic: string; payload: unknown }>("SELECT topic, payload FROM outbox WHERE kind = 'email' ORDER BY created_at, id");
  return rows
    .map((r) => ({ template: r.topic, data: json(r.payload).data as Record<string, unknown>, to: json(r.payload).to as string }))
    .filter((e) => licenseId === undefined || e.data.license_id === licenseId);
}

async function events(t: TestApp, type: string) {
  const rows = await t.exec<{ payload: unknown }>("SELECT payload FROM outbox WHERE kind = 'event' AND topic = $1 ORDER BY created_at, id", [type]);
  return rows.map((r) => json(r.payload).data as Record<string, unknown>);
}

describe("transitions", () => {
  const cases: {
    name: string;
    plan: Partial<Plan>;
    validUntil: number | null;
    pastDueAt?: number;
    stays: number;
    expires: number | null;
    reason?: string;
    from: string;
  }[] = [
    { name: "a trial expires right after valid_until (no grace)", plan: { licenseType: "trial", graceDays: 5 }, validUntil: 2 * DAY, stays: 2 * DAY, expires: 2 * DAY + MINUTE, reason: "trial_ended", from: "trialing" },
    { name: "an active license expires after valid_until + grace_days", plan: { graceDays: 3 }, validUntil: 2 * DAY, stays: 5 * DAY, expires: 5 * DAY + MINUTE, reason: "grace_ended", from: "active" },
    { name: "an active license without grace expires right after valid_until", plan: { graceDays: 0 }, validUntil: DAY, stays: DAY, expires: DAY + MINUTE, reason: "grace_ended", from: "active" },
    { name: "a past_due license expires after valid_until + grace_days", plan: { graceDays: 2 }, validUntil: DAY, pastDueAt: 0, stays: 3 * DAY, expires: 3 * DAY + MINUTE, reason: "grace_ended", from: "past_due" },
    { name: "a past_due license expires after 30 days unpaid", plan: { graceDays: 0 }, validUntil: null, pastDueAt: HOUR, stays: HOUR + 30 * DAY, expires: HOUR + 30 * DAY + MINUTE, reason: "past_due_limit", from: "past_due" },
    { name: "an active license without valid_until never expires", plan: {}, validUntil: null, stays: 3650 * DAY, expires: null, from: "active" },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const t = await app();
      const l = await license(t, c.plan, { validUntil: c.validUntil === null ? null : at(c.validUntil) });
      if (c.pastDueAt !== undefined) {
        t.clock.set(at(c.pastDueAt));
        await patch(t, l.id, { status: "past_due" });
      }
      t.clock.set(at(c.stays));
      await run(t);
      expect(await status(t, l.id)).toBe(c.from);
      expect(await events(t, "license.expired")).toEqual([]);
      if (c.expires === null) return;

      t.clock.set(at(c.expires));
      const counts = await run(t);
      expect(await status(t, l.id)).toBe("expired");
      const key = c.reason === "trial_ended" ? "trials_expired" : c.reason === "grace_ended" ? "grace_expired" : "past_due_expired";
      expect(counts[key]).toBe(1);
      const evs = await events(t, "license.expired");
      expect(evs).toEqual([expect.objectContaining({ license_id: l.id, status: "expired", previous_status: c.from, reason: c.reason })]);
      const expiredMails = (await emails(t, l.id)).filter((e) => e.template === "license_expired");
      expect(expiredMails).toEqual([expect.objectContaining({ to: l.email, data: expect.objectContaining({ reason: c.reason, expired_at: at(c.expires).toISOString() }) })]);

      // Running again changes nothing and writes nothing.
      const before = (await emails(t)).length;
      const again = await run(t);
      expect(again[key]).toBe(0);
      expect((await emails(t)).length).toBe(before);
      expect(await events(t, "license.expired")).toHaveLength(1);
    });
  }

  test("past_due_since follows the episode: kept through suspend and reinstate, cleared when paid", async () => {
    const t = await app();
    const l = await license(t, {}, {});
    await patch(t, l.id, { status: "past_due" });
    const since = (await t.deps.repos.licenses.findById(l.id))!.pastDueSince;
    expect(since).toEqual(T0);
    t.clock.set(at(DAY));
    await t.request("POST", `${V1}/admin/licenses/${l.id}/suspend`);
    await t.request("POST", `${V1}/admin/licenses/${l.id}/reinstate`);
    const back = (await t.deps.repos.licenses.findById(l.id))!;
    expect(back.status).toBe("past_due");
    expect(back.pastDueSince).toEqual(T0);
    await patch(t, l.id, { status: "active" });
    expect((await t.deps.repos.licenses.findById(l.id))!.pastDueSince).toBeNull();
  });
});

/**
 * A sweep runs the pass every few hours over weeks (100-200 passes, each a background run polled to
 * its end): on PostgreSQL beside the rest of the suite that takes 15-30 s. A functional test, not a
 * timing one, so it gets room beyond the suite's 30 s default.
 */
const SWEEP_TIMEOUT_MS = 120_000;

describe("reminders and notices", () => {
  /** Runs the pass every `step` from `from` to `to` (offsets from T0). */
  async function sweep(t: TestApp, from: number, to: number, step = 6 * HOUR) {
    for (let x = from; x <= to; x += step) {
      t.clock.set(at(x));
      await run(t);
    }
  }
  const templates = async (t: TestApp, id: string) => (await emails(t, id)).map((e) => `${e.template}${e.data.days_left !== undefined ? `:${e.data.days_left}` : e.data.dunning_day !== undefined ? `:day${e.data.dunning_day}` : ""}`);

  test("expiry reminders 7/3/1 days before valid_until, once each; a renewed license is reminded again at its new date", async () => {
    const t = await app();
    const l = await license(t, { graceDays: 30 }, { validUntil: at(10 * DAY) });
    await sweep(t, 0, 9 * DAY + 12 * HOUR);
    expect(await templates(t, l.id)).toEqual(["expiry_reminder:7", "expiry_reminder:3", "expiry_reminder:1"]);
    const notices = await t.deps.repos.lifecycle.notices(l.id);
    expect(notices.map((n) => [n.kind, n.dueFor.toISOString()])).toEqual([
      ["expiry_reminder:7", at(10 * DAY).toISOString()],
      ["expiry_reminder:3", at(10 * DAY).toISOString()],
      ["expiry_reminder:1", at(10 * DAY).toISOString()],
    ]);

    // Renewed: a new valid_until, reminded again at the new dates (and only then).
    await patch(t, l.id, { validUntil: at(40 * DAY) });
    await sweep(t, 9 * DAY + 18 * HOUR, 39 * DAY + 12 * HOUR);
    expect(await templates(t, l.id)).toEqual(["expiry_reminder:7", "expiry_reminder:3", "expiry_reminder:1", "expiry_reminder:7", "expiry_reminder:3", "expiry_reminder:1"]);
    expect(await status(t, l.id)).toBe("active");
  }, SWEEP_TIMEOUT_MS);

  test("only the most urgent reminder when several are already due; none when reminders are disabled", async () => {
    const t = await app();
    const soon = await license(t, {}, { validUntil: at(2 * DAY) });
    await run(t);
    expect(await templates(t, soon.id)).toEqual(["expiry_reminder:2"]);
    expect((await emails(t, soon.id))[0]!.data).toMatchObject({ valid_until: at(2 * DAY).toISOString() });
    expect((await t.deps.repos.lifecycle.notices(soon.id)).map((n) => n.kind)).toEqual(["expiry_reminder:3"]);

    const res = await t.request("PATCH", `${V1}/admin/settings`, { body: { reminders_enabled: false } });
    expect(res.status).toBe(200);
    const quiet = await license(t, {}, { validUntil: at(2 * DAY), supportUntil: at(5 * DAY) });
    await run(t);
    expect(await emails(t, quiet.id)).toEqual([]);
  });

  test("support reminders 30/7 days before support_until, then the lapse notice with its event, once each; renewed support again", async () => {
    const t = await app();
    const l = await license(t, {}, { supportUntil: at(40 * DAY) });
    await sweep(t, 0, 41 * DAY);
    expect(await templates(t, l.id)).toEqual(["support_reminder:30", "support_reminder:7", "support_ended"]);
    expect(await events(t, "license.support_ended")).toEqual([expect.objectContaining({ license_id: l.id, support_until: at(40 * DAY).toISOString(), status: "active" })]);
    expect(await status(t, l.id)).toBe("active");

    // Renewed 19 days before the new end: the 30-day reminder is due at once (showing 19 days).
    await patch(t, l.id, { supportUntil: at(60 * DAY) });
    await sweep(t, 41 * DAY + 6 * HOUR, 61 * DAY);
    expect(await templates(t, l.id)).toEqual(["support_reminder:30", "support_reminder:7", "support_ended", "support_reminder:19", "support_reminder:7", "support_ended"]);
    expect((await t.deps.repos.lifecycle.notices(l.id)).map((n) => n.kind)).toEqual(["support_reminder:30", "support_reminder:7", "support_ended", "support_reminder:30", "support_reminder:7", "support_ended"]);
    expect(await events(t, "license.support_ended")).toHaveLength(2);
  }, SWEEP_TIMEOUT_MS);

  test("a support_until that ended more than 30 days ago gets no lapse notice", async () => {
    const t = await app();
    const l = await license(t, {}, { supportUntil: at(-31 * DAY) });
    await run(t);
    expect(await emails(t, l.id)).toEqual([]);
  });

  test("dunning on day 1, 7 and 14 of a past_due episode, once each; a new episode dunned again", async () => {
    const t = await app();
    const l = await license(t, {}, {});
    t.clock.set(at(HOUR));
    await patch(t, l.id, { status: "past_due" });
    await sweep(t, HOUR, 20 * DAY, 3 * HOUR);
    expect(await templates(t, l.id)).toEqual(["dunning:day1", "dunning:day7", "dunning:day14"]);
    const first = (await emails(t, l.id))[0]!.data;
    expect(first).toMatchObject({ past_due_since: at(HOUR).toISOString(), expires_at: at(HOUR + 30 * DAY).toISOString() });

    // Paid, then past due again: a new episode.
    await patch(t, l.id, { status: "active" });
    t.clock.set(at(21 * DAY));
    await patch(t, l.id, { status: "past_due" });
    await run(t);
    expect(await templates(t, l.id)).toEqual(["dunning:day1", "dunning:day7", "dunning:day14", "dunning:day1"]);
  }, SWEEP_TIMEOUT_MS);

  test("two runs in a row: the second writes nothing", async () => {
    const t = await app();
    await license(t, {}, { validUntil: at(7 * DAY) });
    await license(t, {}, { supportUntil: at(30 * DAY) });
    await license(t, { licenseType: "trial" }, { validUntil: at(-HOUR) });
    const first = await run(t);
    expect(first).toMatchObject({ expiry_reminders: 1, support_reminders: 1, trials_expired: 1 });
    const count = (await emails(t)).length;
    const second = await run(t);
    expect(second).toMatchObject({ expiry_reminders: 0, support_reminders: 0, trials_expired: 0, support_ended: 0, dunning_emails: 0, batches: 0 });
    expect((await emails(t)).length).toBe(count);
  });

  test("the hourly job pass does the same work under the job lease, once per slot", async () => {
    const t = await app();
    const l = await license(t, { licenseType: "trial" }, { validUntil: at(-HOUR) });
    const slot = new Date("2026-11-21T08:07:00.000Z");
    const first = await runPass(t.deps, "lifecycle", { trigger: "schedule", slot, owner: "node-a" });
    expect(first).toMatchObject({ status: "ok", result: expect.objectContaining({ trials_expired: 1 }) });
    expect(await runPass(t.deps, "lifecycle", { trigger: "schedule", slot, owner: "node-b" })).toBeNull();
    expect(await status(t, l.id)).toBe("expired");
    const jobs = await t.request("GET", `${V1}/admin/system/jobs`);
    const job = jobs.body.data.items.find((j: { name: string }) => j.name === "lifecycle");
    expect(job).toMatchObject({ schedule: "7 * * * *", last_result: { status: "ok", result: expect.objectContaining({ trials_expired: 1 }) } });
  });

  test("pages smaller than the work: every license is handled, in several transactions", async () => {
    const t = await app();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await license(t, {}, { validUntil: at(5 * DAY - i * MINUTE) })).id);
    for (let i = 0; i < 5; i++) await license(t, { licenseType: "trial" }, { validUntil: at(-DAY + i * MINUTE) });
    const counts = await runLifecycle(t.deps, t.clock.now(), { batchSize: 2 });
    expect(counts.expiry_reminders).toBe(7);
    expect(counts.trials_expired).toBe(5);
    expect(counts.batches).toBeGreaterThanOrEqual(6);
    for (const id of ids) expect(await templates(t, id)).toEqual(["expiry_reminder:5"]);
    const again = await runLifecycle(t.deps, t.clock.now(), { batchSize: 2 });
    expect(again).toMatchObject({ expiry_reminders: 0, trials_expired: 0, batches: 0 });
  });
});

describe("POST /admin/system/run-expiry-checks: 202 and a run to poll", () => {
  const runsOf = (fence: number) => `${V1}/admin/system/jobs/lifecycle/runs/${fence}`;

  test("answers 202 with the running run and its Location; the poll shows its counts once finished", async () => {
    const t = await app();
    await license(t, { licenseType: "trial" }, { validUntil: at(-HOUR) });
    const res = await t.request("POST", `${V1}/admin/system/run-expiry-checks`);
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({ name: "lifecycle", status: "running", started_at: T0.toISOString(), finished_at: null, result: null, error: null });
    const fence = res.body.data.fence;
    expect(res.headers.get("location")).toBe(runsOf(fence));
    const done = await pollRun(t, runsOf(fence));
    expect(done).toMatchObject({ name: "lifecycle", fence, status: "ok", lease_until: null, finished_at: T0.toISOString() });
    expect(done.result).toMatchObject({ trials_expired: 1, scanned: 1 });
    // The job's status shows the same run as its last result.
    const jobs = await t.request("GET", `${V1}/admin/system/jobs`);
    expect(jobs.body.data.items.find((j: { name: string }) => j.name === "lifecycle")).toMatchObject({ fence, running: false, last_result: { trigger: "admin", status: "ok" } });
  });

  test("while a run holds the lease (another node's, or the scheduled one) a POST returns that run, and starts none", async () => {
    const t = await app();
    const l = await license(t, { licenseType: "trial" }, { validUntil: at(-HOUR) });
    // Another node runs the pass: it holds the lease.
    const other = await t.deps.repos.jobLeases.claimNow("lifecycle", "node-b", at(50 * MINUTE), T0);
    expect(other).not.toBeNull();
    for (let i = 0; i < 2; i++) {
      const res = await t.request("POST", `${V1}/admin/system/run-expiry-checks`);
      expect(res.status).toBe(202);
      expect(res.body.data).toMatchObject({ fence: other!.fence, status: "running", lease_until: at(50 * MINUTE).toISOString() });
      expect(res.headers.get("location")).toBe(runsOf(other!.fence));
    }
    expect(await status(t, l.id)).toBe("trialing");
    expect((await t.request("GET", runsOf(other!.fence))).body.data).toMatchObject({ status: "running" });
    // Its lease lapses unfinished (the node died): the run shows as abandoned, and a POST starts a new one.
    t.clock.set(at(51 * MINUTE));
    expect((await t.request("GET", runsOf(other!.fence))).body.data).toMatchObject({ status: "abandoned", finished_at: null });
    const counts = await runExpiryChecks(t);
    expect(counts.trials_expired).toBe(1);
    expect(await status(t, l.id)).toBe("expired");
    // Only the latest run is on record; fences not (yet) claimed are 404 as well.
    expect((await t.request("GET", runsOf(other!.fence))).status).toBe(404);
    expect((await t.request("GET", runsOf(other!.fence + 5))).status).toBe(404);
    expect((await t.request("GET", `${V1}/admin/system/jobs/nope/runs/1`)).status).toBe(404);
  });

  test("a retry right after the first POST gets the same run while it is still running", async () => {
    const t = await app();
    for (let i = 0; i < 40; i++) await license(t, {}, { validUntil: at(5 * DAY + i * MINUTE) });
    const [a, b] = await Promise.all([t.request("POST", `${V1}/admin/system/run-expiry-checks`), t.request("POST", `${V1}/admin/system/run-expiry-checks`)]);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(b.body.data.fence).toBe(a.body.data.fence);
    const done = await pollRun(t, runsOf(a.body.data.fence));
    expect(done.result).toMatchObject({ expiry_reminders: 40 });
    expect((await emails(t)).filter((e) => e.template === "expiry_reminder")).toHaveLength(40);
  });
});

describe("emails at a real SMTP server", () => {
  test("each lifecycle email arrives once, with the settings, the override and escaped HTML", async () => {
    const smtp = await smtpServer();
    const t = await app({ SMTP_URL: smtp.url, MAIL_FROM: "Acme <noreply@acme.example>" });
    const settings = await t.request("PATCH", `${V1}/admin/settings`, {
      body: { vendor_name: "Acme <Software>", support_email: "help@acme.example", portal_url: "https://portal.acme.example/" },
    });
    expect(settings.status).toBe(200);
    const put = await t.request("PUT", `${V1}/admin/email-templates/support_reminder`, {
      body: { subject: "{{ vendor_name }}: support for {{product_name}} ends in {{days_left}}", body: "Renew at {{portal_url}} before {{support_until}}.\n\n{{vendor_name}}" },
    });
    expect(put.status).toBe(200);

    const product = await makeProduct(t.deps, { name: `Edit & "Co" <b>` });
    const plan = await makePlan(t.deps, product.id, { name: "Pro" });
    const trial = await makePlan(t.deps, product.id, { name: "Trial", licenseType: "trial" });
    const a = (await makeLicense(t.deps, { productId: product.id, planId: plan.id, email: "a@example.com", validUntil: at(7 * DAY) })).license;
    const b = (await makeLicense(t.deps, { productId: product.id, planId: plan.id, email: "b@example.com", supportUntil: at(30 * DAY) })).license;
    const c = (await makeLicense(t.deps, { productId: product.id, planId: trial.id, email: "c@example.com", validUntil: at(-HOUR) })).license;
    void a;
    void b;
    void c;
    await run(t);
    await run(t);
    const deliver = async () => (await t.request("POST", `${V1}/admin/system/jobs/deliver-outbox/run`)).body.data.result;
    // Three emails, and four events (three license.created, one license.expired) handed to the
    // webhook fan-out (no endpoint wants them: marked sent).
    expect(await deliver()).toMatchObject({ sent: 7 });
    expect(await deliver()).toMatchObject({ sent: 0 });
    expect(smtp.received.map((m) => m.envelope.to[0]).sort()).toEqual(["a@example.com", "b@example.com", "c@example.com"]);

    const byTo = (to: string) => smtp.received.find((m) => m.envelope.to[0] === to)!;
    const reminder = byTo("a@example.com");
    expect(reminder.subject).toBe(`Your Edit & "Co" <b> license expires in 7 days`);
    expect(reminder.text).toContain("expires on 2026-11-28 08:00 UTC, in 7 days");
    expect(reminder.text).toContain("Manage your license: https://portal.acme.example");
    expect(reminder.text).toContain("Questions? Write to help@acme.example.");
    expect(reminder.text).toContain("Acme <Software>");
    expect(reminder.html).toContain("Edit &amp; &quot;Co&quot; &lt;b&gt;");
    expect(reminder.html).not.toContain("<b>");
    expect(reminder.html).toContain("Acme &lt;Software&gt;");
    expect(reminder.html).toContain(`<a href="https://portal.acme.example"`);

    const support = byTo("b@example.com");
    expect(support.subject).toBe(`Acme <Software>: support for Edit & "Co" <b> ends in 30 days`);
    expect(support.text.trim()).toBe("Renew at https://portal.acme.example before 2026-12-21 08:00 UTC.\n\nAcme <Software>");
    // The admin list shows the subject as it is sent (settings and override applied).
    const listed = await t.request("GET", `${V1}/admin/emails?template=support_reminder`);
    expect(listed.body.data.items.map((e: { subject: string; status: string }) => [e.subject, e.status])).toEqual([[support.subject, "sent"]]);

    const expired = byTo("c@example.com");
    expect(expired.subject).toBe(`Your Edit & "Co" <b> license has expired`);
    expect(expired.text).toContain("Your trial period has ended.");
  });

  test("without the settings, the lines that show them are left out", async () => {
    const smtp = await smtpServer();
    const t = await app({ SMTP_URL: smtp.url, MAIL_FROM: "noreply@acme.example" });
    await license(t, {}, { validUntil: at(DAY) });
    await run(t);
    await t.request("POST", `${V1}/admin/system/jobs/deliver-outbox/run`);
    expect(smtp.received).toHaveLength(1);
    const text = smtp.received[0]!.text;
    expect(text).not.toContain("Manage your license");
    expect(text).not.toContain("Questions?");
    expect(text).not.toContain("{{");
  });
});

describe("email template admin routes", () => {
  test("list, override, refuse unknown placeholders, preview, reset", async () => {
    const t = await app();
    const list = await t.request("GET", `${V1}/admin/email-templates`);
    expect(list.status).toBe(200);
    expect(list.body.data.items.map((i: any) => i.name)).toEqual(["expiry_reminder", "support_reminder", "support_ended", "dunning", "license_expired", "support_renewed", "license_purchased", "sign_in_code", "seat_invite"]);
    expect(list.body.data.items.every((i: any) => i.customized === false && i.updated_at === null)).toBe(true);

    const bad = await t.request("PUT", `${V1}/admin/email-templates/dunning`, { body: { subject: "Pay {{product_name}}", body: "Hi {{customer_password}} {{constructor}}" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("VALIDATION_ERROR");
    expect(bad.body.error.details.fields.body).toContain("{{customer_password}}");
    const stray = await t.request("PUT", `${V1}/admin/email-templates/dunning`, { body: { subject: "Pay {{product_name}", body: "ok" } });
    expect(stray.status).toBe(400);
    expect(stray.body.error.details.fields.subject).toBeDefined();
    const code = await t.request("PUT", `${V1}/admin/email-templates/dunning`, { body: { subject: "{{ product_name.constructor }}", body: "x" } });
    expect(code.status).toBe(400);
    const unknown = await t.request("PUT", `${V1}/admin/email-templates/webhook_disabled`, { body: { subject: "x", body: "y" } });
    expect(unknown.status).toBe(404);

    const put = await t.request("PUT", `${V1}/admin/email-templates/dunning`, { body: { subject: "Pay for {{product_name}}", body: "Since {{past_due_since}}: <script>{{product_name}}</script>" } });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ name: "dunning", customized: true, subject: "Pay for {{product_name}}", updated_at: T0.toISOString() });

    const preview = await t.request("POST", `${V1}/admin/email-templates/dunning/preview`, { body: { data: { product_name: "Acme & Co" } } });
    expect(preview.status).toBe(200);
    expect(preview.body.data.subject).toBe("Pay for Acme & Co");
    expect(preview.body.data.text).toContain("Since 2026-11-14 08:00 UTC: <script>Acme & Co</script>");
    expect(preview.body.data.html).toContain("&lt;script&gt;Acme &amp; Co&lt;/script&gt;");
    expect(preview.body.data.html).not.toContain("<script>");

    const draft = await t.request("POST", `${V1}/admin/email-templates/dunning/preview`, { body: { subject: "Draft {{dunning_day}}" } });
    expect(draft.body.data.subject).toBe("Draft 7");
    const badDraft = await t.request("POST", `${V1}/admin/email-templates/dunning/preview`, { body: { body: "{{nope}}" } });
    expect(badDraft.status).toBe(400);

    const audit = await t.request("GET", `${V1}/admin/audit?entity_id=dunning`);
    expect(audit.body.data.items.map((i: any) => i.action)).toContain("email_template.update");

    const reset = await t.request("DELETE", `${V1}/admin/email-templates/dunning`);
    expect(reset.status).toBe(200);
    expect(reset.body.data).toMatchObject({ customized: false, subject: "Payment for your {{product_name}} license is past due", updated_at: null });
    const after = await t.request("POST", `${V1}/admin/email-templates/dunning/preview`, { body: {} });
    expect(after.body.data.subject).toBe("Payment for your Acme Editor license is past due");
  });
});
