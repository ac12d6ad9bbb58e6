import { expect, test } from "bun:test";
import { fillTemplate, LIFECYCLE_DEFINITIONS, LIFECYCLE_TEMPLATES, templateTextErrors } from "./lifecycle";

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
