// The error handler's own log lines (COMMON rule 14, docs/security.md: no license keys or tokens in
// logs). A response that fails its schema is our bug and is logged; Elysia's ValidationError message
// embeds the whole response value ("found"), which on license routes holds the plaintext license key
// (admin issue/detail) or a signed token (activate/verify).
import { expect, test } from "bun:test";
import { Elysia, t } from "elysia";
import { errorHandler } from "../../../src/http/error-handler";
import { createLogger } from "../../../src/shared/logger";

test("a response failing its schema is logged with where it failed, never with the response's values", async () => {
  const lines: string[] = [];
  const app = new Elysia({ normalize: false })
    .use(errorHandler(createLogger("debug", (l) => lines.push(l))))
    .get("/x", () => ({ license_key: "KW-SECRETAA-SECRETBB-SECRETCC-SECRETDD", token: "payload.signature-secret", n: "not a number" }) as never, {
      response: { 200: t.Object({ license_key: t.String(), token: t.String(), n: t.Integer() }) },
    });
  const res = await app.handle(new Request("http://localhost/x"));
  expect(res.status).toBe(500);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("INTERNAL_ERROR");
  const log = lines.join("\n");
  expect(log).toContain("response validation failed");
  // Where it failed is kept, so the bug can still be found.
  expect(log).toContain("/n");
  expect(log).not.toContain("SECRET");
  expect(log).not.toContain("signature-secret");
  expect(log).not.toContain("not a number");
});
