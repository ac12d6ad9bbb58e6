// Email delivery from the outbox, end to end: a real SMTP server (smtp-server on 127.0.0.1) receives
// what the deliver-outbox pass sends (run through POST /admin/system/jobs/deliver-outbox/run, as JOBS
// is off under NODE_ENV=test). Runs on SQLite and, with KEYWARD_TEST_ENGINE=postgres, on PostgreSQL.
import { afterEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { startSmtpServer, type TestSmtpServer } from "../../support/smtp";
import { sealedEmail } from "../../../src/modules/email/outbox";
import { createEmailHandler } from "../../../src/modules/email/handler";
import { maySignIn } from "../../../src/modules/sign-in/service";
import { emailMessage } from "../../../src/modules/outbox/effects";
import { BATCH_SIZE, deliverOutbox } from "../../../src/modules/outbox/service";
import { createLogger } from "../../../src/shared/logger";
import { HOUR } from "../../../src/shared/clock";

const V1 = "/api/v1";
const FROM = "Acme Licensing <noreply@acme.example>";
const CODE = "493817";
const TOKEN = "5e1f".repeat(16);
const ACCEPT_URL = `http://localhost/portal/accept-invite#token=${TOKEN}`;
const HOSTILE = `<script>alert("x")</script> & 'Co'`;

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function smtpServer(): Promise<TestSmtpServer> {
  const s = await startSmtpServer();
  cleanup.push(() => s.stop());
  return s;
}

async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await createTestApp({ env });
  cleanup.push(() => t.close());
  return t;
}

/** A sign-in code email to `to`, made a user first: the handler sends codes only to who may sign in. */
async function signIn(t: TestApp, to: string, code = CODE) {
  await t.deps.repos.users.ensure(to.toLowerCase(), t.clock.now());
  return t.deps.repos.outbox.enqueue(
    emailMessage(sealedEmail(t.deps.secrets, { template: "sign_in_code", to, at: t.clock.now(), data: { ttl_minutes: 10 }, secret: { code } })),
  );
}

async function invite(t: TestApp, to: string, productName = "Acme Editor", acceptUrl = ACCEPT_URL) {
  return t.deps.repos.outbox.enqueue(
    emailMessage(
      sealedEmail(t.deps.secrets, {
        template: "seat_invite",
        to,
        at: t.clock.now(),
        data: { product_name: productName, role: "member", invited_by: "Eve <eve@example.com>", expires_at: "2026-11-28T08:00:00.000Z" },
        secret: { accept_url: acceptUrl },
      }),
    ),
  );
}

/** One deliver-outbox pass through the admin route; its counts. */
async function deliver(t: TestApp) {
  const res = await t.request("POST", `${V1}/admin/system/jobs/deliver-outbox/run`);
  expect(res.status).toBe(200);
  expect(res.body.data.status).toBe("ok");
  return res.body.data.result;
}

async function emails(t: TestApp, query = "") {
  const res = await t.request("GET", `${V1}/admin/emails${query}`);
  expect(res.status).toBe(200);
  return res.body.data.items as Record<string, unknown>[];
}

function capture() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger("debug", (l) => lines.push(JSON.parse(l))) };
}

describe("delivery over SMTP", () => {
  test("the admin's email_from setting replaces MAIL_FROM for every email sent from then on; null goes back", async () => {
    const smtp = await smtpServer();
    const t = await app({ SMTP_URL: smtp.url, MAIL_FROM: FROM });
    const set = async (email_from: string | null) => expect((await t.request("PATCH", `${V1}/admin/settings`, { body: { email_from } })).status).toBe(200);
    await set("Acme Billing <billing@acme.example>");
    await signIn(t, "dana@example.com");
    expect((await deliver(t)).sent).toBe(1);
    expect(smtp.received.at(-1)!.from).toBe("Acme Billing <billing@acme.example>");
    expect(smtp.received.at(-1)!.envelope.from).toBe("billing@acme.example");
    await set(null);
    await signIn(t, "erin@example.com");
    expect((await deliver(t)).sent).toBe(1);
    expect(smtp.received.at(-1)!.from).toBe(FROM);
  });

  test("both templates reach the SMTP server with the code and the link, escaped HTML, the configured From and login", async () => {
    const smtp = await smtpServer();
    const t = await app({ SMTP_URL: smtp.url, MAIL_FROM: FROM });
    await signIn(t, "Bob@Example.com");
    await invite(t, "carol@example.com", HOSTILE);

    expect(await deliver(t)).toEqual({ claimed: 2, sent: 2, logged: 0, retried: 0, gave_up: 0, lost: 0 });
    expect(smtp.received).toHaveLength(2);
    const code = smtp.received.find((m) => m.subject === "Your sign-in code")!;
    const inv = smtp.received.find((m) => m.envelope.to[0] === "carol@example.com")!;

    // nodemailer lower-cases the domain (case-insensitive in DNS); the local part is kept as given.
    expect(code.envelope).toEqual({ from: "noreply@acme.example", to: ["Bob@example.com"] });
    expect(code.from).toBe(FROM);
    expect(code.user).toBe("mailer");
    expect(code.headers.get("auto-submitted")).toBe("auto-generated");
    expect(code.text).toContain(`    ${CODE}\n`);
    expect(code.text).toContain("It expires in 10 minutes.");
    expect(code.text).toContain("If you did not ask to sign in, you can ignore this email");
    expect(code.html).toContain(`>${CODE}</p>`);
    expect(code.html).toContain("It expires in 10 minutes.");
    expect(code.html).toContain("you can ignore this email");

    // The product name is admin input: verbatim in the subject and the text, escaped in the HTML.
    expect(inv.subject).toBe(`You are invited to ${HOSTILE}`);
    expect(inv.text).toContain(`Eve <eve@example.com> invited you to use ${HOSTILE} as a member.`);
    expect(inv.text).toContain(`\n${ACCEPT_URL}\n`);
    expect(inv.text).toContain("The invitation expires on 2026-11-28 08:00 UTC.");
    expect(inv.html).not.toContain("<script>");
    expect(inv.html).not.toContain("<eve@");
    expect(inv.html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;Co&#39;");
    expect(inv.html).toContain("Eve &lt;eve@example.com&gt; invited you");
    // The link as a button and as plain text.
    expect(inv.html).toContain(`<a href="${ACCEPT_URL}" style="display:inline-block;`);
    expect(inv.html).toContain(`>Accept the invitation</a>`);
    expect(inv.html).toContain(`>${ACCEPT_URL}</a>`);

    const listed = await emails(t);
    expect(listed.map((e) => [e.template, e.status, e.attempts, e.sent_at])).toEqual([
      ["seat_invite", "sent", 0, t.clock.now().toISOString()],
      ["sign_in_code", "sent", 0, t.clock.now().toISOString()],
    ]);
    // Delivered once: the next pass has nothing to do.
    expect((await deliver(t)).claimed).toBe(0);
    expect(smtp.received).toHaveLength(2);
  });

  test("a 5xx answer gives up at once (failed); a 4xx answer is retried with backoff and then delivered", async () => {
    const smtp = await smtpServer();
    const t = await app({ SMTP_URL: smtp.url, MAIL_FROM: FROM });
    smtp.reject = (to) =>
      to.startsWith("gone@") ? { code: 550, message: "5.1.1 mailbox unavailable" } : to.startsWith("busy@") ? { code: 451, message: "4.3.0 try again later" } : null;
    const gone = await signIn(t, "gone@example.com");
    const busy = await invite(t, "busy@example.com");
    const { lines, logger } = capture();
    const deps = { ...t.deps, logger, outboxHandlers: { email: createEmailHandler({ config: t.deps.config, secrets: t.deps.secrets, logger, maySignIn: (a) => maySignIn(t.deps.repos, t.deps.config, a) }) } };

    expect(await deliverOutbox(deps)).toEqual({ claimed: 2, sent: 0, logged: 0, retried: 1, gave_up: 1, lost: 0 });
    const [failed] = await emails(t, "?status=failed");
    expect(failed).toMatchObject({ id: gone.id, status: "failed", attempts: 1, sent_at: null, last_error: expect.stringContaining("550") });
    const [pending] = await emails(t, "?status=pending");
    expect(pending).toMatchObject({ id: busy.id, status: "pending", attempts: 1, sent_at: null, last_error: expect.stringContaining("451") });
    expect(smtp.received).toHaveLength(0);
    // The failure warnings name the message, never its code or link.
    expect(lines.filter((l) => l.level === "warn").map((l) => l.id).sort()).toEqual([busy.id, gone.id].sort());
    for (const l of lines) expect(JSON.stringify(l)).not.toMatch(new RegExp(`${CODE}|${TOKEN}`));

    smtp.reject = null;
    // The first retry waits at most WEBHOOK_RETRY_BASE_SECONDS (30 s).
    t.clock.advance(HOUR);
    expect(await deliver(t)).toEqual({ claimed: 1, sent: 1, logged: 0, retried: 0, gave_up: 0, lost: 0 });
    expect(smtp.received.map((m) => m.envelope.to)).toEqual([["busy@example.com"]]);
    expect(await emails(t, "?status=sent")).toEqual([expect.objectContaining({ id: busy.id, attempts: 1, last_error: expect.stringContaining("451") })]);
    // The failed one is never tried again.
    expect((await deliver(t)).claimed).toBe(0);
  });

  test("an unreachable SMTP server is a temporary failure: the message stays pending for a retry", async () => {
    const closed = await startSmtpServer();
    await closed.stop();
    const t = await app({ SMTP_URL: closed.url, MAIL_FROM: FROM });
    const m = await signIn(t, "bob@example.com");
    expect(await deliver(t)).toEqual({ claimed: 1, sent: 0, logged: 0, retried: 1, gave_up: 0, lost: 0 });
    expect(await emails(t)).toEqual([expect.objectContaining({ id: m.id, status: "pending", attempts: 1, last_error: expect.stringMatching(/^SMTP error: ESOCKET connect ECONNREFUSED /) })]);
  });

  test("a sealed value copied into another recipient's email does not open: given up, nothing sent", async () => {
    const smtp = await smtpServer();
    const t = await app({ SMTP_URL: smtp.url, MAIL_FROM: FROM });
    const original = await signIn(t, "victim@example.com");
    const payload = original.payload as Record<string, unknown>;
    await t.exec("DELETE FROM outbox");
    const copied = await t.deps.repos.outbox.enqueue({ kind: "email", topic: "sign_in_code", payload: { ...payload, to: "attacker@example.com" }, at: t.clock.now() });
    const unknown = await t.deps.repos.outbox.enqueue({ kind: "email", topic: "newsletter", payload: { template: "newsletter", to: "x@example.com", data: {} }, at: t.clock.now() });
    expect(await deliver(t)).toEqual({ claimed: 2, sent: 0, logged: 0, retried: 0, gave_up: 2, lost: 0 });
    expect(smtp.received).toHaveLength(0);
    const byId = new Map((await emails(t)).map((e) => [e.id, e]));
    expect(byId.get(copied.id)).toMatchObject({ status: "failed", last_error: expect.stringMatching(/^cannot render email: /) });
    expect(byId.get(unknown.id)).toMatchObject({ status: "failed", template: "newsletter", subject: null });
  });
});

describe("sign-in codes for addresses that cannot sign in (issue 25 point 4)", () => {
  test("are dropped at delivery: nothing reaches SMTP, the code is in no log line, the message is recorded logged", async () => {
    const smtp = await smtpServer();
    const t = await app({ SMTP_URL: smtp.url, MAIL_FROM: FROM });
    const { lines, logger } = capture();
    t.deps.outboxHandlers.email = createEmailHandler({ config: t.deps.config, secrets: t.deps.secrets, logger, maySignIn: (a) => maySignIn(t.deps.repos, t.deps.config, a) });
    const dropped = await t.deps.repos.outbox.enqueue(
      emailMessage(sealedEmail(t.deps.secrets, { template: "sign_in_code", to: "stranger@example.com", at: t.clock.now(), data: { ttl_minutes: 10 }, secret: { code: CODE } })),
    );
    const sent = await signIn(t, "user@example.com");
    expect(await deliver(t)).toEqual({ claimed: 2, sent: 1, logged: 1, retried: 0, gave_up: 0, lost: 0 });
    expect(smtp.received.map((m) => m.envelope.to)).toEqual([["user@example.com"]]);
    expect(lines.map((l) => [l.level, l.outbox_id, l.template])).toEqual([["info", dropped.id, "sign_in_code"]]);
    expect(JSON.stringify(lines)).not.toContain(CODE);
    const byId = new Map((await emails(t)).map((e) => [e.id, e.status]));
    expect([byId.get(dropped.id), byId.get(sent.id)]).toEqual(["logged", "sent"]);
  });
});

describe("a long delivery pass", () => {
  test("lets the event loop run between batches: a timer set when it starts fires before it ends", async () => {
    const t = await app();
    // Logged emails (no SMTP_URL) settle without any I/O: three batches' worth.
    for (let i = 0; i < BATCH_SIZE * 2 + 5; i++) await invite(t, `user${i}@example.com`);
    const order: string[] = [];
    setTimeout(() => order.push("timer"), 0);
    const counts = await deliverOutbox(t.deps);
    order.push("pass");
    expect(counts.logged).toBe(BATCH_SIZE * 2 + 5);
    expect(order).toEqual(["timer", "pass"]);
  });

  test("lets the event loop run within a batch too: a timer set when it starts fires before its one batch ends", async () => {
    const t = await app();
    // Enough that the batch (its handlers, then its marks) runs well past one slice.
    for (let i = 0; i < 300; i++) await invite(t, `user${i}@example.com`);
    const order: string[] = [];
    setTimeout(() => order.push("timer"), 0);
    const counts = await deliverOutbox(t.deps, { batchSize: 1000, maxBatches: 1 });
    order.push("pass");
    expect(counts.logged).toBe(300);
    expect(order).toEqual(["timer", "pass"]);
  });
});

describe("without SMTP_URL (development)", () => {
  test("each email is written to the log at info, link and code included, and recorded as logged", async () => {
    const t = await app();
    expect(t.deps.config.smtpUrl).toBeNull();
    const { lines, logger } = capture();
    // The handler the container registers, with a logger this test can read.
    t.deps.outboxHandlers.email = createEmailHandler({ config: t.deps.config, secrets: t.deps.secrets, logger, maySignIn: (a) => maySignIn(t.deps.repos, t.deps.config, a) });
    const a = await signIn(t, "bob@example.com");
    const b = await invite(t, "carol@example.com");

    expect(await deliver(t)).toEqual({ claimed: 2, sent: 0, logged: 2, retried: 0, gave_up: 0, lost: 0 });
    expect(lines).toHaveLength(2);
    // Delivered concurrently: the code's line may come second (its handler first asks whether bob may sign in).
    const first = lines.find((l) => l.outbox_id === a.id);
    const second = lines.find((l) => l.outbox_id === b.id);
    expect(first).toMatchObject({ level: "info", outbox_id: a.id, template: "sign_in_code", to: "bob@example.com", subject: "Your sign-in code" });
    expect(first!.text).toContain(CODE);
    expect(second).toMatchObject({ level: "info", outbox_id: b.id, template: "seat_invite", to: "carol@example.com", subject: "You are invited to Acme Editor" });
    expect(second!.text).toContain(ACCEPT_URL);

    const listed = await emails(t, "?status=logged");
    expect(listed.map((e) => [e.id, e.status, e.sent_at])).toEqual([
      [b.id, "logged", t.clock.now().toISOString()],
      [a.id, "logged", t.clock.now().toISOString()],
    ]);
    expect((await deliver(t)).claimed).toBe(0);
  });

  test("with NODE_ENV=production the log line leaves the text, and so the code and link, out", async () => {
    const t = await app();
    const { lines, logger } = capture();
    t.deps.outboxHandlers.email = createEmailHandler({ config: { ...t.deps.config, nodeEnv: "production" }, secrets: t.deps.secrets, logger, maySignIn: (a) => maySignIn(t.deps.repos, t.deps.config, a) });
    await signIn(t, "bob@example.com");
    await invite(t, "carol@example.com");
    expect(await deliver(t)).toMatchObject({ claimed: 2, logged: 2 });
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).toMatchObject({ level: "info", text_omitted: "NODE_ENV=production: set SMTP_URL to send emails" });
      expect(line.text).toBeUndefined();
      expect(JSON.stringify(line)).not.toContain(CODE);
      expect(JSON.stringify(line)).not.toContain(TOKEN);
    }
  });

  test("the registered handler logs too (no SMTP server is contacted), and a production boot warns once", async () => {
    const t = await app();
    await signIn(t, "bob@example.com");
    expect(await deliver(t)).toMatchObject({ claimed: 1, logged: 1 });
    const { warnIfEmailIsOnlyLogged } = await import("../../../src/modules/email/handler");
    const { lines, logger } = capture();
    expect(warnIfEmailIsOnlyLogged({ nodeEnv: "production", smtpUrl: null }, logger)).toBe(true);
    expect(warnIfEmailIsOnlyLogged({ nodeEnv: "production", smtpUrl: "smtp://mail.example.com" }, logger)).toBe(false);
    expect(warnIfEmailIsOnlyLogged({ nodeEnv: "development", smtpUrl: null }, logger)).toBe(false);
    expect(lines.map((l) => l.level)).toEqual(["warn"]);
  });
});

describe("secrets at rest", () => {
  test("the outbox row holds no plaintext code or link, before and after delivery", async () => {
    const smtp = await smtpServer();
    const t = await app({ SMTP_URL: smtp.url, MAIL_FROM: FROM });
    await signIn(t, "bob@example.com");
    await invite(t, "carol@example.com");
    const scan = async () => {
      const rows = await t.exec("SELECT * FROM outbox");
      expect(rows).toHaveLength(2);
      const raw = JSON.stringify(rows);
      // Control: the scan reads the stored values (the recipient and product name are in the clear).
      expect(raw).toContain("carol@example.com");
      expect(raw).toContain("Acme Editor");
      expect(raw).toContain("sealed");
      expect(raw).not.toContain(CODE);
      expect(raw).not.toContain(TOKEN);
      expect(raw).not.toContain("accept-invite");
    };
    await scan();
    expect((await deliver(t)).sent).toBe(2);
    expect(smtp.received.map((m) => m.text).join("\n")).toContain(TOKEN);
    await scan();
  });
});
