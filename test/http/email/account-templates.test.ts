// The sign-in code and seat invite emails as admin-editable templates, end to end: the override is
// saved through PUT /admin/email-templates/{name}, the next code or invite (asked for through the real
// routes) reaches a real SMTP server (smtp-server on 127.0.0.1) in the override's words with a
// working code or link, previews render it, an override without the secret is refused, DELETE brings
// the designed default back, and the secret never shows in GET /admin/emails or the outbox row.
// Runs on SQLite and, with KEYWARD_TEST_ENGINE=postgres, on PostgreSQL.
import { afterEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { startSmtpServer, type ReceivedMail } from "../../support/smtp";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";

const V1 = "/api/v1";
const FROM = "Acme Licensing <noreply@acme.example>";
const HOSTILE = `<script>alert("x")</script> & 'Co'`;

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function setup(productName = "Acme Editor") {
  const smtp = await startSmtpServer();
  cleanup.push(() => smtp.stop());
  const t = await createTestApp({ env: { SMTP_URL: smtp.url, MAIL_FROM: FROM } });
  cleanup.push(() => t.close());
  const product = await makeProduct(t.deps, { name: productName });
  const plan = await makePlan(t.deps, product.id);
  const { license, key } = await makeLicense(t.deps, { productId: product.id, planId: plan.id });
  return { smtp, t, owner: license.email, key };
}

/** Delivers what the outbox holds (a sign-in request also nudges a pass) and returns the one new email. */
async function nextEmail(t: TestApp, smtp: { received: ReceivedMail[] }, before: number): Promise<ReceivedMail> {
  const res = await t.request("POST", `${V1}/admin/system/jobs/deliver-outbox/run`);
  expect(res.status).toBe(200);
  for (let i = 0; i < 100 && smtp.received.length === before; i++) await Bun.sleep(20);
  expect(smtp.received).toHaveLength(before + 1);
  return smtp.received[before]!;
}

async function listed(t: TestApp, template: string) {
  const res = await t.request("GET", `${V1}/admin/emails?template=${template}`);
  expect(res.status).toBe(200);
  return res.body.data.items as Record<string, unknown>[];
}

/** Asks for a code; the browser's sign_in_attempt cookie, which the verify must carry. */
async function requestCode(t: TestApp, email: string): Promise<string> {
  const res = await t.request("POST", `${V1}/auth/otp/request`, { body: { email } });
  expect(res.status).toBe(200);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

describe("sign_in_code", () => {
  test("listed with its secret placeholder; an override without {{code}}, or with it in the subject, is refused", async () => {
    const { t } = await setup();
    const list = await t.request("GET", `${V1}/admin/email-templates`);
    expect(list.status).toBe(200);
    const item = list.body.data.items.find((i: any) => i.name === "sign_in_code");
    expect(item).toMatchObject({
      customized: false,
      subject: "Your sign-in code",
      placeholders: ["code", "ttl_minutes", "vendor_name", "support_email", "portal_url"],
      secret_placeholders: ["code"],
      updated_at: null,
    });
    expect(item.defaults.body).toContain("{{code}}");

    const noCode = await t.request("PUT", `${V1}/admin/email-templates/sign_in_code`, { body: { subject: "Sign in", body: "Your code expires in {{ttl_minutes}} minutes." } });
    expect(noCode.status).toBe(400);
    expect(noCode.body.error.code).toBe("VALIDATION_ERROR");
    expect(noCode.body.error.details.fields.body).toBe("must contain {{code}}: this email is useless without it");
    const inSubject = await t.request("PUT", `${V1}/admin/email-templates/sign_in_code`, { body: { subject: "Code {{code}}", body: "{{code}}" } });
    expect(inSubject.status).toBe(400);
    expect(inSubject.body.error.details.fields.subject).toContain("may only appear in the body");
    const draft = await t.request("POST", `${V1}/admin/email-templates/sign_in_code/preview`, { body: { body: "No code here" } });
    expect(draft.status).toBe(400);
    expect(draft.body.error.details.fields.body).toContain("{{code}}");
    // Nothing was stored.
    expect((await t.request("GET", `${V1}/admin/email-templates`)).body.data.items.find((i: any) => i.name === "sign_in_code").customized).toBe(false);
  });

  test("an override is used by the next code email, the code still signs in, the secret stays sealed; DELETE brings the designed email back", async () => {
    const { smtp, t, owner } = await setup();
    const body = "Hi!\n\nCode: {{code}} (valid {{ttl_minutes}} min)\n\nHelp: {{support_email}}\n\n{{vendor_name}}";
    const put = await t.request("PUT", `${V1}/admin/email-templates/sign_in_code`, { body: { subject: "{{vendor_name}} sign-in", body } });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ name: "sign_in_code", customized: true, subject: "{{vendor_name}} sign-in", body });
    expect((await t.request("PATCH", `${V1}/admin/settings`, { body: { vendor_name: "Acme Inc" } })).status).toBe(200);

    // Preview: the override with the sample code; given data replaces it.
    const preview = await t.request("POST", `${V1}/admin/email-templates/sign_in_code/preview`, { body: {} });
    expect(preview.status).toBe(200);
    expect(preview.body.data.subject).toBe("Acme Inc sign-in");
    expect(preview.body.data.text).toBe("Hi!\n\nCode: 493817 (valid 10 min)\n\nAcme Inc\n");
    const given = await t.request("POST", `${V1}/admin/email-templates/sign_in_code/preview`, { body: { data: { code: "111222" } } });
    expect(given.body.data.text).toContain("Code: 111222 (valid 10 min)");

    const attempt = await requestCode(t, owner);
    const mail = await nextEmail(t, smtp, 0);
    expect(mail.subject).toBe("Acme Inc sign-in");
    const code = /^Code: (\d{6}) \(valid 10 min\)$/m.exec(mail.text)?.[1];
    expect(code).toBeDefined();
    expect(mail.text).toBe(`Hi!\n\nCode: ${code} (valid 10 min)\n\nAcme Inc\n`);
    expect(mail.html).toContain(`<p style="margin:0 0 16px;">Code: ${code} (valid 10 min)</p>`);

    // The secret: not in the admin listing (its subject is the override's), nor in the outbox row.
    const items = await listed(t, "sign_in_code");
    expect(items).toHaveLength(1);
    expect(items[0]!.subject).toBe("Acme Inc sign-in");
    expect(JSON.stringify(items)).not.toContain(code!);
    const rows = JSON.stringify(await t.exec("SELECT * FROM outbox"));
    expect(rows).toContain("sealed");
    expect(rows).not.toContain(code!);

    // The emailed code is the real one.
    const verified = await t.request("POST", `${V1}/auth/otp/verify`, { body: { email: owner, code }, cookie: attempt });
    expect(verified.status).toBe(200);

    // Reset: the designed default again (heading, the code in large type), in the preview and the next email.
    const reset = await t.request("DELETE", `${V1}/admin/email-templates/sign_in_code`);
    expect(reset.status).toBe(200);
    expect(reset.body.data).toMatchObject({ customized: false, subject: "Your sign-in code", updated_at: null });
    const designed = await t.request("POST", `${V1}/admin/email-templates/sign_in_code/preview`, { body: {} });
    expect(designed.body.data.subject).toBe("Your sign-in code");
    expect(designed.body.data.html).toContain('letter-spacing:8px;">493817</p>');

    await requestCode(t, owner);
    const again = await nextEmail(t, smtp, 1);
    expect(again.subject).toBe("Your sign-in code");
    const code2 = /^ {4}(\d{6})$/m.exec(again.text)?.[1];
    expect(code2).toBeDefined();
    expect(again.text).toContain("It expires in 10 minutes.");
    expect(again.html).toContain(`letter-spacing:8px;">${code2}</p>`);
    expect((await listed(t, "sign_in_code")).map((e) => e.subject)).toEqual(["Your sign-in code", "Your sign-in code"]);
  });
});

describe("seat_invite", () => {
  test("an override is used by the next invite, its link accepts, the link stays sealed; previews escape; DELETE brings the designed email back", async () => {
    const { smtp, t, owner, key } = await setup(HOSTILE);
    const cookie = await t.signIn(owner);

    const item = (await t.request("GET", `${V1}/admin/email-templates`)).body.data.items.find((i: any) => i.name === "seat_invite");
    expect(item).toMatchObject({ customized: false, subject: "You are invited to {{product_name}}", secret_placeholders: ["accept_url"] });

    const noLink = await t.request("PUT", `${V1}/admin/email-templates/seat_invite`, { body: { subject: "Join {{product_name}}", body: "Join {{product_name}} as {{role}}." } });
    expect(noLink.status).toBe(400);
    expect(noLink.body.error.code).toBe("VALIDATION_ERROR");
    expect(noLink.body.error.details.fields.body).toBe("must contain {{accept_url}}: this email is useless without it");
    const inSubject = await t.request("PUT", `${V1}/admin/email-templates/seat_invite`, { body: { subject: "Join {{accept_url}}", body: "{{accept_url}}" } });
    expect(inSubject.status).toBe(400);
    expect(inSubject.body.error.details.fields.subject).toContain("{{accept_url}}");

    const body = "{{invited_by}} added you to {{product_name}} as {{role}}.\n\nJoin here: {{accept_url}}\n\nThe link works until {{expires_at}}.";
    const put = await t.request("PUT", `${V1}/admin/email-templates/seat_invite`, { body: { subject: "Join {{product_name}} now", body } });
    expect(put.status).toBe(200);

    const preview = await t.request("POST", `${V1}/admin/email-templates/seat_invite/preview`, { body: { data: { product_name: HOSTILE, role: "admin" } } });
    expect(preview.status).toBe(200);
    expect(preview.body.data.subject).toBe(`Join ${HOSTILE} now`);
    expect(preview.body.data.text).toContain(`owner@example.com added you to ${HOSTILE} as an admin.`);
    expect(preview.body.data.text).toContain("Join here: https://licensing.example.com/portal/accept-invite#token=");
    expect(preview.body.data.html).not.toContain("<script>");
    expect(preview.body.data.html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;Co&#39;");
    const badRole = await t.request("POST", `${V1}/admin/email-templates/seat_invite/preview`, { body: { data: { role: "owner" } } });
    expect(badRole.status).toBe(400);

    const added = await t.request("POST", `${V1}/portal/seats/add`, { cookie, body: { license_key: key, email: "dana@example.com", role: "member" } });
    expect(added.status).toBe(200);
    const mail = await nextEmail(t, smtp, 0);
    expect(mail.envelope.to).toEqual(["dana@example.com"]);
    expect(mail.subject).toBe(`Join ${HOSTILE} now`);
    const link = /^Join here: (\S+)$/m.exec(mail.text)?.[1];
    expect(link).toBeDefined();
    const token = /#token=([0-9a-f]{64})$/.exec(link!)?.[1];
    expect(token).toBeDefined();
    expect(mail.text).toContain(`${owner} added you to ${HOSTILE} as a member.`);
    expect(mail.text).toMatch(/The link works until \d{4}-\d\d-\d\d \d\d:\d\d UTC\./);
    expect(mail.html).not.toContain("<script>");
    expect(mail.html).toContain(`<a href="${link}" style="color:#1f6feb;">${link}</a>`);

    const items = await listed(t, "seat_invite");
    expect(items.map((e) => e.subject)).toEqual([`Join ${HOSTILE} now`]);
    expect(JSON.stringify(items)).not.toContain(token!);
    const rows = JSON.stringify(await t.exec("SELECT * FROM outbox"));
    expect(rows).toContain("dana@example.com");
    expect(rows).not.toContain(token!);
    expect(rows).not.toContain("accept-invite");

    // The emailed link is the real one.
    const accepted = await t.request("POST", `${V1}/invites/accept`, { body: { token } });
    expect(accepted.status).toBe(200);

    const reset = await t.request("DELETE", `${V1}/admin/email-templates/seat_invite`);
    expect(reset.status).toBe(200);
    expect(reset.body.data.customized).toBe(false);
    const designed = await t.request("POST", `${V1}/admin/email-templates/seat_invite/preview`, { body: {} });
    expect(designed.body.data.html).toContain(">Accept the invitation</a>");

    expect((await t.request("POST", `${V1}/portal/seats/add`, { cookie, body: { license_key: key, email: "erin@example.com" } })).status).toBe(200);
    const again = await nextEmail(t, smtp, 1);
    expect(again.subject).toBe(`You are invited to ${HOSTILE}`);
    expect(again.text).toContain(`${owner} invited you to use ${HOSTILE} as a member.`);
    expect(again.html).toContain('style="display:inline-block;');
    expect(again.html).toContain(">Accept the invitation</a>");
  });
});

describe("the audit of template changes (one unit of work each)", () => {
  test("each save records from → to, a reset records what it removed, a reset with nothing to remove records nothing", async () => {
    const t = await createTestApp();
    cleanup.push(() => t.close());
    const path = `${V1}/admin/email-templates/dunning`;
    const audit = async () =>
      (await t.request("GET", `${V1}/admin/audit?entity_id=dunning`)).body.data.items
        .map((i: any) => [i.action, i.changes?.subject])
        .reverse();
    expect((await t.request("PUT", path, { body: { subject: "First {{product_name}}", body: "Pay." } })).status).toBe(200);
    expect((await t.request("PUT", path, { body: { subject: "Second {{product_name}}", body: "Pay now." } })).status).toBe(200);
    expect((await t.request("DELETE", path)).status).toBe(200);
    expect((await t.request("DELETE", path)).status).toBe(200);
    expect(await audit()).toEqual([
      ["email_template.update", { from: null, to: "First {{product_name}}" }],
      ["email_template.update", { from: "First {{product_name}}", to: "Second {{product_name}}" }],
      ["email_template.reset", { from: "Second {{product_name}}", to: null }],
    ]);
  });
});
