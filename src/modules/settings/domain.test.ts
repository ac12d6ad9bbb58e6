import { describe, expect, test } from "bun:test";
import { AppError } from "../../shared/errors";
import { normalizeSettingsPatch, resolveSettings, SETTING_DEFAULTS } from "./domain";

describe("settings", () => {
  test("unset or mistyped stored values read as defaults", () => {
    expect(resolveSettings({})).toEqual({ ...SETTING_DEFAULTS });
    expect(resolveSettings({ reminders_enabled: "yes", vendor_name: "Acme", unknown: 1 })).toEqual({ ...SETTING_DEFAULTS, vendor_name: "Acme" });
  });

  test("email_from takes a bare address or Name <address>, never a header break", () => {
    for (const ok of ["billing@acme.test", "Acme Billing <billing@acme.test>"]) expect(() => normalizeSettingsPatch({ email_from: ok })).not.toThrow();
    for (const bad of ["acme", "Acme <billing@acme.test>\r\nBcc: x@y.z", "<billing@acme.test>"]) {
      expect(() => normalizeSettingsPatch({ email_from: bad })).toThrow(AppError);
    }
  });

  test("portal_url must be http(s); day lists are de-duplicated and sorted", () => {
    expect(() => normalizeSettingsPatch({ portal_url: "ftp://acme.test" })).toThrow(AppError);
    expect(normalizeSettingsPatch({ portal_url: "https://portal.acme.test/" }).portal_url).toBe("https://portal.acme.test");
    expect(normalizeSettingsPatch({ expiry_reminder_days: [1, 7, 3, 7] }).expiry_reminder_days).toEqual([7, 3, 1]);
    expect(normalizeSettingsPatch({ expiry_reminder_days: null }).expiry_reminder_days).toBeNull();
  });
});
