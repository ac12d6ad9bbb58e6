// Schema format checks. @elysiajs/openapi, when imported, replaces TypeBox's "uuid" format check
// with `check(z.string().uuid(), value)` — a Zod schema built anew for every value checked. Every
// route validating a uuid (ids in params, plan_id in responses, product_id in bodies) paid for it:
// measured at ~17% of a POST /license/verify. app.ts imports this module right after the plugin so
// the precompiled check below is the one registered.
import { FormatRegistry } from "elysia/type-system";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

FormatRegistry.Set("uuid", (value) => UUID.test(value));
