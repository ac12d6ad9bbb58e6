// Schema format checks that do not depend on whether the OpenAPI plugin has been loaded.
// @elysiajs/openapi, when imported, replaces TypeBox's format checks with its own, among them
// "uuid" — `check(z.string().uuid(), value)`, a Zod schema built anew for every value checked (every
// route validating a uuid paid for it: measured at ~17% of a POST /license/verify) — and "email",
// Zod's email check built the same way. The plugin is now imported when the OpenAPI document is
// first requested (http/openapi.ts), so the checks in force must not change at that moment: both are
// registered here, precompiled, at start and again right after the plugin's import.
import { FormatRegistry } from "elysia/type-system";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Zod 4's email pattern (`z.string().email()`, bundled in @elysiajs/openapi 1.4.16), the check every
// email field was validated with while the plugin loaded at start: the same addresses are accepted.
const EMAIL = /^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$/;

export function registerFormats(): void {
  FormatRegistry.Set("uuid", (value) => UUID.test(value));
  FormatRegistry.Set("email", (value) => EMAIL.test(value));
}

registerFormats();
