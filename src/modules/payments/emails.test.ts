import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { secretsFromMaster } from "../keys/secrets";
import { emailMessage } from "../outbox/effects";
import { openEmail } from "../email/outbox";
import { templateTextErrors } from "../email/placeholders";
import { emailSubject, renderEmail } from "../email/templates";
import type { License } from "../licenses/repo";
import { licensePurchasedEmail, supportRenewedEmail } from "./emails";

const secrets = secretsFromMaster(new Uint8Array(randomBytes(32)));
const at = new Date("2026-11-23T08:00:00.000Z");
const KEY = "ACME-7H2QX9KD-M4TRZ8WP-B6NC3VYE-LQ5GJ7Q7ZK";
const license: License = {
  id: "0192f0c4-5d6e-7a8b-9c0d-1e2f3a4b5c6d",
  productId: "p",
  planId: "pl",
  keyHash: "h",
  keyEncrypted: "e",
  keyHint: "Q7ZK",
  email: "buyer@example.com",
  status: "active",
  priorStatus: null,
  validUntil: null,
  supportUntil: new Date("2027-11-23T08:00:00.000Z"),
  pastDueSince: null,
  externalCustomerId: null,
  externalWorkspaceId: null,
  createdAt: at,
  updatedAt: at,
};

test("license_purchased: the key is sealed in the outbox row and appears only in the rendered body", () => {
  const email = licensePurchasedEmail(secrets, { license, licenseKey: KEY, productName: "Acme <Editor>", planName: "Pro", at });
  const row = emailMessage(email);
  expect(JSON.stringify(row.payload)).not.toContain(KEY);
  expect(JSON.stringify(row.payload)).not.toContain("M4TRZ8WP");
  const rendered = renderEmail(openEmail(secrets, row.payload));
  expect(rendered.text).toContain(KEY);
  expect(rendered.html).toContain(KEY);
  expect(rendered.html).toContain("Acme &lt;Editor&gt;");
  expect(rendered.subject).toBe("Your Acme <Editor> license");
  expect(rendered.subject).not.toContain(KEY);
  // The subject GET /admin/emails shows is rendered from the clear values only.
  expect(emailSubject("license_purchased", email.data)).toBe(rendered.subject);
});

test("license_purchased: {{license_key}} is refused in a subject override, accepted in the body", () => {
  expect(Object.keys(templateTextErrors("license_purchased", { subject: "Key {{license_key}}", body: "{{license_key}}" }))).toEqual(["subject"]);
  expect(templateTextErrors("license_purchased", { subject: "Your key", body: "Key: {{ license_key }}" })).toEqual({});
  // Other templates do not know it at all.
  expect(Object.keys(templateTextErrors("support_renewed", { subject: "s", body: "{{license_key}}" }))).toEqual(["body"]);
});

test("support_renewed names the new support end", () => {
  const before = { ...license, supportUntil: new Date("2026-12-01T00:00:00.000Z") };
  const email = supportRenewedEmail(secrets, { before, after: license, productName: "Acme Editor", planName: "Pro", at });
  expect(email.sealed).toBeUndefined();
  const rendered = renderEmail(openEmail(secrets, emailMessage(email).payload));
  expect(rendered.subject).toBe("Support and updates for Acme Editor renewed until 2027-11-23 08:00 UTC");
  expect(rendered.text).toContain("now ends on 2027-11-23 08:00 UTC");
});
