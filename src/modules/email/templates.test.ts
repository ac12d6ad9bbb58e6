import { describe, expect, test } from "bun:test";
import { emailSubject, escapeHtml, renderEmail, TemplateValueError } from "./templates";
import type { OpenedEmail } from "./outbox";

const invite = (data: Record<string, unknown> = {}, secret: Record<string, string> = {}): OpenedEmail => ({
  template: "seat_invite",
  to: "carol@example.com",
  data: { product_name: "Acme Editor", role: "admin", invited_by: null, expires_at: "2026-11-28T08:30:00.000Z", ...data },
  secret: { accept_url: "https://licenses.acme.example/portal/accept-invite#token=" + "ab".repeat(32), ...secret },
});
const code = (data: Record<string, unknown> = {}, secret: Record<string, string> = {}): OpenedEmail => ({
  template: "sign_in_code",
  to: "bob@example.com",
  data: { ttl_minutes: 10, ...data },
  secret: { code: "042913", ...secret },
});

describe("email templates", () => {
  test("escapeHtml escapes the five HTML-significant characters", () => {
    expect(escapeHtml(`<a href="x">Tom & Jerry's</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;");
  });

  test("sign-in code: prominent code, its lifetime (singular too), and the ignore line", () => {
    const r = renderEmail(code());
    expect(r.subject).toBe("Your sign-in code");
    expect(r.text).toBe(
      "Your sign-in code is:\n\n    042913\n\nIt expires in 10 minutes.\n\nIf you did not ask to sign in, you can ignore this email: nobody can sign in without this code.\n",
    );
    expect(r.html).toContain("font-size:34px;font-weight:700;letter-spacing:8px;\">042913</p>");
    expect(renderEmail(code({ ttl_minutes: 1 })).text).toContain("It expires in 1 minute.");
  });

  test("invite: inviter (or Someone), role, link as button and as text, expiry in UTC; the subject has no line breaks", () => {
    const r = renderEmail(invite({ product_name: "Acme\r\nBcc: x@evil.example", invited_by: "Alice" }));
    expect(r.subject).toBe("You are invited to Acme Bcc: x@evil.example");
    expect(r.text).toStartWith("Alice invited you to use Acme Bcc: x@evil.example as an admin.\n");
    expect(r.text).toContain("The invitation expires on 2026-11-28 08:30 UTC.");
    expect(renderEmail(invite({ role: "member" })).text).toStartWith("Someone invited you to use Acme Editor as a member.");
    const html = renderEmail(invite()).html;
    expect(html.match(/href="https:\/\/licenses\.acme\.example\/portal\/accept-invite#token=(ab){32}"/g)).toHaveLength(2);
  });

  test("a hostile product name, inviter and link are escaped in the HTML", () => {
    const r = renderEmail(invite({ product_name: "<img src=x onerror=alert(1)>", invited_by: "\"><script>x</script>" }, { accept_url: 'https://x.example/"><script>y</script>' }));
    expect(r.html).not.toMatch(/<img|<script/);
    expect(r.html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(r.html).toContain('href="https://x.example/&quot;&gt;&lt;script&gt;y&lt;/script&gt;"');
  });

  test("missing or invalid values are refused (a retry could not fix them)", () => {
    const bad: OpenedEmail[] = [
      code({}, { code: "" }),
      code({ ttl_minutes: 0 }),
      code({ ttl_minutes: "10" }),
      invite({ product_name: "" }),
      invite({ role: "owner" }),
      invite({ expires_at: "soon" }),
      invite({}, { accept_url: "javascript:alert(1)" }),
      { ...invite(), secret: {} },
    ];
    for (const e of bad) expect(() => renderEmail(e)).toThrow(TemplateValueError);
  });

  test("the subject needs only the non-secret values", () => {
    expect(emailSubject("sign_in_code", {})).toBe("Your sign-in code");
    expect(emailSubject("seat_invite", { product_name: "Acme Editor" })).toBe("You are invited to Acme Editor");
    expect(emailSubject("seat_invite", {})).toBe("You are invited to a product");
  });

  test("webhook disabled: host, description, the reason, how to enable it; escaped HTML; a bad reason is refused", () => {
    const email = (data: Record<string, unknown>): OpenedEmail => ({
      template: "webhook_disabled",
      to: "ops@example.com",
      data: { endpoint_id: "e-1", url_host: "crm.acme.example", description: "CRM <sync>", reason: "failures", failures: 20, ...data },
      secret: {},
    });
    const r = renderEmail(email({}));
    expect(r.subject).toBe("Webhook endpoint disabled: crm.acme.example");
    expect(r.text).toContain("Keyward stopped sending webhooks to crm.acme.example (CRM <sync>).");
    expect(r.text).toContain("The last 20 delivery attempts in a row failed.");
    expect(r.text).toContain("POST /api/v1/admin/webhooks/e-1/enable");
    expect(r.html).toContain("CRM &lt;sync&gt;");
    expect(r.html).not.toContain("CRM <sync>");
    expect(renderEmail(email({ reason: "gone" })).text).toContain("410 Gone");
    expect(() => renderEmail(email({ reason: "bored" }))).toThrow(TemplateValueError);
    expect(() => renderEmail(email({ url_host: "" }))).toThrow(TemplateValueError);
  });
});
