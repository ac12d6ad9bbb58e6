import { expect, test } from "bun:test";
import { fillTemplate, lifecycleBody, LIFECYCLE_DEFINITIONS, LIFECYCLE_TEMPLATES, templateTextErrors } from "./lifecycle";

test("the defaults use only their own placeholders", () => {
  for (const name of LIFECYCLE_TEMPLATES) expect(templateTextErrors(name, LIFECYCLE_DEFINITIONS[name].defaults)).toEqual({});
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
  const { htmlBody } = lifecycleBody("support_ended", { product_name: "<b>X</b>", support_until: "2026-11-20T00:00:00.000Z" }, { vendor_name: null, support_email: null, portal_url: "https://p.example/a?b=1&c=2" }, escapeHtml, {
    subject: "s",
    body: "{{product_name}} at {{portal_url}}.\nnext",
  });
  expect(htmlBody).toBe('<p style="margin:0 0 16px;">&lt;b&gt;X&lt;/b&gt; at <a href="https://p.example/a?b=1&amp;c=2" style="color:#1f6feb;">https://p.example/a?b=1&amp;c=2</a>.<br>\nnext</p>');
});
