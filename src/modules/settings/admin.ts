import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { SettingsSchema, UpdateSettingsBody } from "./model";
import { getSettings, updateSettings } from "./service";

const detail = (summary: string) => ({ tags: ["Admin: settings"], summary });

export function settingsAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/settings/admin" })
    .use(guard)
    .get("/admin/settings", async ({ actor }) => ok(await getSettings(deps, actor)), {
      scopes: ["admin"],
      response: { 200: Envelope(SettingsSchema), ...errors(401, 403) },
      detail: detail("Read all system settings (defaults filled in)"),
    })
    .patch("/admin/settings", async ({ actor, body }) => ok(await updateSettings(deps, actor, body)), {
      scopes: ["admin"],
      body: UpdateSettingsBody,
      response: { 200: Envelope(SettingsSchema), ...errors(401, 403) },
      detail: detail("Change some settings; null resets a key to its default; unknown keys are refused"),
    });
}
