import { expect, test } from "bun:test";
import { ACCOUNT_TEMPLATES, EDITABLE_DEFINITIONS, EDITABLE_TEMPLATES } from "./editable";
import { fillTemplate, renderBody, templateTextErrors } from "./placeholders";
import { DEFAULT_RENDER_CONTEXT, renderEmail, renderLifecycle } from "./templates";

test("the defaults use only their own placeholders", () => {
  for (const name of EDITABLE_TEMPLATES) expect(templateTextErrors(name, EDITABLE_DEFINITIONS[name].defaults)).toEqual({});
});

test("sign_in_code and seat_invite: the default text fills to exactly the designed email's subject and plain text", () => {
  for (const name of ACCOUNT_TEMPLATES) {
    const def = EDITABLE_DEFINITIONS[name];
    const secrets = def.secretPlaceholders ?? [];
    const data = Object.fromEntries(Object.entries(def.sample).filter(([k]) => !secrets.includes(k)));
    const secret = Object.fromEntries(Object.entries(def.sample).filter(([k]) => secrets.includes(k)).map(([k, v]) => [k, String(v)]));
    const designed = renderEmail({ template: name, to: "x@example.com", data, secret }, DEFAULT_RENDER_CONTEXT);
    const generic = renderLifecycle(name, def.sample, DEFAULT_RENDER_CONTEXT, def.defaults);
    expect(generic.subject).toBe(designed.subject);
    expect(generic.text).toBe(designed.text);
  }
});

test("an override of sign_in_code / seat_invite / license_purchased must carry the secret in its body, and never in its subject", () => {
  expect(templateTextErrors("sign_in_code", { subject: "Code", body: "Hello, your code expires in {{ttl_minutes}} minutes." })).toEqual({
    body: "must contain {{code}}: this email is useless without it",
  });
  expect(Object.keys(templateTextErrors("sign_in_code", { subject: "Code {{code}}", body: "{{ code }}" }))).toEqual(["subject"]);
  expect(templateTextErrors("sign_in_code", { subject: "Code", body: "{{ code }}" })).toEqual({});
  expect(templateTextErrors("seat_invite", { subject: "Join {{product_name}}", body: "Join {{product_name}}." })).toEqual({
    body: "must contain {{accept_url}}: this email is useless without it",
  });
  // license_purchased exists to deliver the key: required in the body too.
  expect(templateTextErrors("license_purchased", { subject: "Thanks", body: "Thanks for buying {{product_name}}." })).toEqual({
    body: "must contain {{license_key}}: this email is useless without it",
  });
  expect(templateTextErrors("license_purchased", { subject: "Thanks", body: "Your key: {{license_key}}" })).toEqual({});
});

test("unknown placeholders, stray braces, multi-line subjects are refused", () => {
  expect(Object.keys(templateTextErrors("dunning", { subject: "{{valid_until}}", body: "ok" }))).toEqual(["subject"]);
  expect(Object.keys(templateTextErrors("dunning", { subject: "ok", body: "{{ product_name }} {{x" }))).toEqual(["body"]);
  expect(Object.keys(templateTextErrors("dunning", { subject: "a\nb", body: "}}" }))).toEqual(["subject", "body"]);
  expect(templateTextErrors("dunning", { subject: "{{ product_name }}", body: "{{dunning_day}}" })).toEqual({});
});

test("fill substitutes values as text and drops lines whose placeholders are all empty", () => {
  expect(fillTemplate("A {{x}}\nB {{y}}\n\n\nC {{x}} {{y}}\nD", { x: "{{y}}", y: "" })).toBe("A {{y}}\n\nC {{y}} \nD");
});

test("the HTML part escapes everything and links http(s) addresses without trailing punctuation", async () => {
  const { escapeHtml } = await import("./templates");
  const { htmlBody } = renderBody("support_ended", { product_name: "<b>X</b>", support_until: "2026-11-20T00:00:00.000Z" }, { vendor_name: null, support_email: null, portal_url: "https://p.example/a?b=1&c=2" }, escapeHtml, {
    subject: "s",
    body: "{{product_name}} at {{portal_url}}.\nnext",
  });
  expect(htmlBody).toBe('<p style="margin:0 0 16px;">&lt;b&gt;X&lt;/b&gt; at <a href="https://p.example/a?b=1&amp;c=2" style="color:#1f6feb;">https://p.example/a?b=1&amp;c=2</a>.<br>\nnext</p>');
});
