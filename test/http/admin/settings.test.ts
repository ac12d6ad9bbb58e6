import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { makeProduct } from "../../support/factories";
import { V1, expectError, expectValidation, lastAudit } from "./helpers";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const DEFAULTS = {
  vendor_name: null,
  support_email: null,
  email_from: null,
  portal_url: null,
  reminders_enabled: true,
  expiry_reminder_days: [7, 3, 1],
  support_reminder_days: [30, 7],
};

describe("settings", () => {
  test("defaults, patch, read back, null resets; audited", async () => {
    expect((await t.request("GET", `${V1}/admin/settings`)).body.data).toEqual(DEFAULTS);

    const patched = await t.request("PATCH", `${V1}/admin/settings`, {
      body: {
        vendor_name: "Acme Software",
        support_email: "help@acme.test",
        email_from: "Acme <noreply@acme.test>",
        portal_url: "https://portal.acme.test/",
        reminders_enabled: false,
        expiry_reminder_days: [1, 14, 7, 14],
      },
    });
    expect(patched.status).toBe(200);
    const expected = {
      ...DEFAULTS,
      vendor_name: "Acme Software",
      support_email: "help@acme.test",
      email_from: "Acme <noreply@acme.test>",
      portal_url: "https://portal.acme.test",
      reminders_enabled: false,
      expiry_reminder_days: [14, 7, 1],
    };
    expect(patched.body.data).toEqual(expected);
    expect((await t.request("GET", `${V1}/admin/settings`)).body.data).toEqual(expected);

    let row = await lastAudit(t, "settings", "settings.update");
    expect(row.entity_type).toBe("settings");
    expect(row.changes.before).toEqual({ vendor_name: null, support_email: null, email_from: null, portal_url: null, reminders_enabled: true, expiry_reminder_days: [7, 3, 1] });
    expect(row.changes.after.expiry_reminder_days).toEqual([14, 7, 1]);

    const reset = await t.request("PATCH", `${V1}/admin/settings`, { body: { reminders_enabled: null, expiry_reminder_days: null } });
    expect(reset.body.data).toMatchObject({ reminders_enabled: true, expiry_reminder_days: [7, 3, 1], vendor_name: "Acme Software" });
    row = await lastAudit(t, "settings", "settings.update");
    expect(row.changes).toEqual({ before: { reminders_enabled: false, expiry_reminder_days: [14, 7, 1] }, after: { reminders_enabled: true, expiry_reminder_days: [7, 3, 1] } });
  });

  test("unknown keys and bad values are 400 VALIDATION_ERROR; nothing changes", async () => {
    const before = (await t.request("GET", `${V1}/admin/settings`)).body.data;
    const patch = (body: unknown) => t.request("PATCH", `${V1}/admin/settings`, { body });
    expectValidation(await patch({ theme: "dark" }));
    expectValidation(await patch({ vendor_name: "Ok", theme: "dark" }));
    expectValidation(await patch({}));
    expectValidation(await patch({ support_email: "not-an-email" }), "support_email");
    expectValidation(await patch({ email_from: "Acme <noreply@acme.test>\nBcc: x@y.test" }), "email_from");
    expectValidation(await patch({ portal_url: "javascript:alert(1)" }), "portal_url");
    expectValidation(await patch({ reminders_enabled: "yes" }), "reminders_enabled");
    expectValidation(await patch({ expiry_reminder_days: [0] }), "expiry_reminder_days");
    expectValidation(await patch({ support_reminder_days: [400] }), "support_reminder_days");
    expectValidation(await patch({ vendor_name: "" }), "vendor_name");
    expect((await t.request("GET", `${V1}/admin/settings`)).body.data).toEqual(before);
  });

  test("admin only and system-wide: scoped keys and product-bound admin keys are refused", async () => {
    const lw = await t.apiKey(["licenses:write"]);
    expectError(await t.request("GET", `${V1}/admin/settings`, { key: lw }), 403, "INSUFFICIENT_SCOPE");
    expectError(await t.request("PATCH", `${V1}/admin/settings`, { key: lw, body: { vendor_name: "x" } }), 403, "INSUFFICIENT_SCOPE");
    const bound = await t.apiKey(["admin"], (await makeProduct(t.deps)).id);
    expectError(await t.request("GET", `${V1}/admin/settings`, { key: bound }), 403, "PRODUCT_SCOPE_MISMATCH");
    expectError(await t.request("PATCH", `${V1}/admin/settings`, { key: bound, body: { vendor_name: "x" } }), 403, "PRODUCT_SCOPE_MISMATCH");
    expectError(await t.request("GET", `${V1}/admin/settings`, { key: null }), 401, "UNAUTHORIZED");
  });
});
