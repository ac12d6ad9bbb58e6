// Identifiers a new row can hold (license-api/access.ts MAX_STORED_IDENTIFIER_BYTES): PostgreSQL
// indexes (license_id, identifier) and a btree entry holds at most 2704 bytes, so with
// IDENTIFIER_MAX_LENGTH raised (it goes to 4096) an activation or floating checkout of a long
// identifier answered 500 on PostgreSQL (index row size exceeds maximum) and 200 on SQLite. Now both
// engines refuse a new identifier past 2048 bytes of UTF-8 with 400, and never a lookup: an
// identifier stored before still verifies.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createTestApp, sqliteOnlyTest, type TestApp } from "../../support/app";
import { catalog, post } from "../../support/license-api";
import { newId } from "../../../src/shared/ids";
import { portalPost, team } from "../portal/helpers";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { IDENTIFIER_MAX_LENGTH: "4096" } });
});
afterAll(() => t.close());

/** Random (incompressible: PostgreSQL compresses repetitive index entries below the limit) text of `bytes` UTF-8 bytes. */
const ofBytes = (bytes: number) => randomBytes(bytes).toString("hex").slice(0, bytes);

function expectIdentifierRefused(res: { status: number; body: any }) {
  expect({ status: res.status, code: res.body.error?.code, fields: Object.keys(res.body.error?.details?.fields ?? {}) }).toEqual({
    status: 400,
    code: "VALIDATION_ERROR",
    fields: ["identifier"],
  });
}

describe("identifiers past 2048 bytes of UTF-8", () => {
  test("activate: 2048 bytes activates and verifies; 2049, or 683 three-byte characters, is 400 and stores nothing", async () => {
    const { key, license } = await catalog(t, { maxActivations: 10 });
    const longest = ofBytes(2048);
    expect((await post(t, "/license/activate", { license_key: key, identifier: longest })).status).toBe(200);
    expect((await post(t, "/license/verify", { license_key: key, identifier: longest })).status).toBe(200);
    for (const identifier of [ofBytes(2049), ofBytes(4096), "€".repeat(683)]) {
      expectIdentifierRefused(await post(t, "/license/activate", { license_key: key, identifier }));
    }
    expect((await t.exec("SELECT id FROM activations WHERE license_id = $1", [license.id])).length).toBe(1);
    // 682 three-byte characters are 2046 bytes: accepted.
    expect((await post(t, "/license/activate", { license_key: key, identifier: "€".repeat(682) })).status).toBe(200);
  });

  test("floating checkout: 2048 bytes opens a session; 2049 is 400", async () => {
    const { key } = await catalog(t, { floating: true, maxActivations: 3, floatingTimeout: 10 });
    expect((await post(t, "/license/floating/checkout", { license_key: key, identifier: ofBytes(2048) })).status).toBe(200);
    expectIdentifierRefused(await post(t, "/license/floating/checkout", { license_key: key, identifier: ofBytes(2049) }));
  });

  test("portal self-service offline activation: 2048 bytes activates; 2049 is 400", async () => {
    const tm = await team(t, { maxActivations: 1 });
    const activate = (identifier: string) => portalPost(t, tm.owner.cookie, "/portal/offline-activation/activate", { license_key: tm.key, identifier });
    expectIdentifierRefused(await activate(ofBytes(2049)));
    expect((await activate(ofBytes(2048))).status).toBe(200);
  });

  test("the refusal comes before the key is looked at: an unknown key with a long identifier is 400, not 404, and feeds no lockout", async () => {
    expectIdentifierRefused(await post(t, "/license/activate", { license_key: "KW-AAAAAAAA-AAAAAAAA-AAAAAAAA-AAAAAAAA", identifier: ofBytes(3000) }));
    expect(await t.exec("SELECT ip FROM brute_force_state")).toEqual([]);
  });

  sqliteOnlyTest("an identifier longer than that, stored by an earlier version on SQLite, still verifies and deactivates", async () => {
    const { key, license } = await catalog(t, { maxActivations: 10 });
    const stored = ofBytes(4000);
    await t.exec("INSERT INTO activations (id, license_id, identifier, identifier_type, created_at, last_seen_at) VALUES ($1, $2, $3, 'device', $4, $4)", [
      newId(),
      license.id,
      stored,
      t.clock.now(),
    ]);
    expect((await post(t, "/license/verify", { license_key: key, identifier: stored })).status).toBe(200);
    expect((await post(t, "/license/deactivate", { license_key: key, identifier: stored })).status).toBe(200);
  });
});
