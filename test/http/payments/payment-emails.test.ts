// The payment email templates through the admin API: listed, previewed and edited like the lifecycle
// ones; the sealed license key may appear in the body only.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";

const V1 = "/api/v1";
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("support_renewed and license_purchased are editable templates", async () => {
  const list = await t.request("GET", `${V1}/admin/email-templates`);
  expect(list.status).toBe(200);
  const names = (list.body.data.items ?? list.body.data).map((x: { name: string }) => x.name);
  expect(names).toEqual(expect.arrayContaining(["support_renewed", "license_purchased"]));

  const preview = await t.request("POST", `${V1}/admin/email-templates/license_purchased/preview`, { body: {} });
  expect(preview.status).toBe(200);
  expect(preview.body.data.text).toContain("ACME-7H2QX9KD-M4TRZ8WP-B6NC3VYE-LQ5GJ7Q7ZK");

  const refused = await t.request("PUT", `${V1}/admin/email-templates/license_purchased`, { body: { subject: "Key {{license_key}}", body: "{{license_key}}" } });
  expect(refused.status).toBe(400);
  expect(refused.body.error.code).toBe("VALIDATION_ERROR");

  const saved = await t.request("PUT", `${V1}/admin/email-templates/support_renewed`, { body: { subject: "Renewed: {{product_name}}", body: "Until {{support_until}}." } });
  expect(saved.status).toBe(200);
  const shown = await t.request("POST", `${V1}/admin/email-templates/support_renewed/preview`, { body: {} });
  expect(shown.body.data.subject).toBe("Renewed: Acme Editor");
  expect(shown.body.data.text).toBe("Until 2027-11-20 00:00 UTC.\n");
});
