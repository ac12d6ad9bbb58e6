// Characters XML 1.0 forbids (U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+FFFE, U+FFFF) make
// feed.xml not well-formed, and one bad document fails every Sparkle/WinSparkle client of the
// product (update-formats.md §1.1, §6). Two guards, both proven here:
//   1. every admin text field that reaches a feed refuses them with 400 VALIDATION_ERROR naming it;
//   2. values already stored with them (written before the check, or by a path that skips it) are
//      stripped when the feeds render, so the appcast still passes the real xmllint.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, testEngine, type TestApp } from "../../support/app";
import { makeProduct } from "../../support/factories";
import { xmllintCheck, xmllintXPath } from "../../support/xmllint";
import { toolTest } from "../../support/tools";
import { createDraft, publishRelease } from "../releases/support";

const ILLEGAL = ["\u0000", "\u0001", "\u0008", "\u000B", "\u000C", "\u000E", "\u001B", "\u001F", "\uFFFE", "\uFFFF"];
const hex = (c: string) => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
// Legal in XML 1.0 and so accepted: TAB, LF, CR, DEL, C1 controls, U+FFFD, astral characters.
const LEGAL = "tab\there\nline\r\nend \u007F \u0085 \uFFFD 😀 Ünïcødé";
// What can be planted straight into the database: PostgreSQL refuses U+0000 in text at the protocol
// level, so on that engine a stored NUL cannot exist and the other characters are planted.
const ALL_ILLEGAL = ILLEGAL.filter((c) => testEngine() === "sqlite" || c !== "\u0000").join("");

let t: TestApp;
let productId: string;
let draftId: string;

beforeAll(async () => {
  t = await createTestApp();
  const res = await t.request("POST", "/api/v1/admin/products", { body: { name: "Clean", slug: "clean" } });
  expect(res.status).toBe(201);
  productId = res.body.data.id;
  draftId = (await createDraft(t, productId, { version: "0.1.0" })).id;
});
afterAll(() => t.close());

function expectRefused(res: { status: number; body: any }, field: string) {
  expect(res.status).toBe(400);
  expect(res.body.success).toBe(false);
  expect(res.body.error.code).toBe("VALIDATION_ERROR");
  expect(Object.keys(res.body.error.details.fields)).toContain(field);
}

describe("input: 400 VALIDATION_ERROR naming the field", () => {
  const cases: { what: string; field: string; send: (value: string, i: number) => Promise<{ status: number; body: any }> }[] = [
    {
      what: "POST /admin/products name",
      field: "name",
      send: (v, i) => t.request("POST", "/api/v1/admin/products", { body: { name: v, slug: `p-name-${i}` } }),
    },
    {
      what: "POST /admin/products minimum_supported_message",
      field: "minimum_supported_message",
      send: (v, i) => t.request("POST", "/api/v1/admin/products", { body: { name: "P", slug: `p-msg-${i}`, minimum_supported_message: v } }),
    },
    { what: "PATCH /admin/products name", field: "name", send: (v) => t.request("PATCH", `/api/v1/admin/products/${productId}`, { body: { name: v } }) },
    {
      what: "PATCH /admin/products minimum_supported_message",
      field: "minimum_supported_message",
      send: (v) => t.request("PATCH", `/api/v1/admin/products/${productId}`, { body: { minimum_supported_message: v } }),
    },
    {
      what: "POST /admin/products/{id}/releases notes",
      field: "notes",
      send: (v, i) => t.request("POST", `/api/v1/admin/products/${productId}/releases`, { body: { version: `1.0.${i}`, notes: v } }),
    },
    { what: "PATCH /admin/releases/{id} notes", field: "notes", send: (v) => t.request("PATCH", `/api/v1/admin/releases/${draftId}`, { body: { notes: v } }) },
  ];

  for (const c of cases) {
    test(`${c.what}: every illegal character is refused; legal control characters pass`, async () => {
      for (const [i, ch] of ILLEGAL.entries()) {
        const res = await c.send(`before${ch}after`, i);
        if (res.status !== 400) throw new Error(`${hex(ch)} was accepted (${res.status})`);
        expectRefused(res, c.field);
      }
      const ok = await c.send(LEGAL, 99);
      expect(ok.status).toBeLessThan(300);
    });
  }

  test("nothing refused was stored", async () => {
    const product = await t.request("GET", `/api/v1/admin/products/${productId}`);
    expect(product.body.data.name).toBe(LEGAL);
    const draft = await t.request("GET", `/api/v1/admin/releases/${draftId}`);
    expect(draft.body.data.notes).toBe(LEGAL);
    const all = await t.request("GET", "/api/v1/admin/products");
    for (const p of all.body.data.items ?? all.body.data) expect(p.name).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/);
  });
});

describe("render: values stored with illegal characters never reach a feed", () => {
  let slug: string;

  beforeAll(async () => {
    const product = await makeProduct(t.deps, { name: "Legacy", slug: "legacy", minimumSupportedVersion: "1.0.0", minimumSupportedMessage: "old" });
    slug = product.slug;
    await publishRelease(t, product.id, "1.0.0", { platforms: ["darwin-arm64"], notes: "n" });
    // Straight into the database, past every input check: what data written before the check (or
    // by a future path that forgets it) looks like.
    await t.exec("UPDATE products SET name = $1, minimum_supported_message = $2, release_generation = release_generation + 1 WHERE id = $3", [
      `Leg${ALL_ILLEGAL}acy & <Co>`,
      `Please${ALL_ILLEGAL} update`,
      product.id,
    ]);
    await t.exec("UPDATE releases SET notes = $1 WHERE product_id = $2", [`<p>No${ALL_ILLEGAL}tes</p> ]]> end`, product.id]);
  });

  toolTest("xmllint")("feed.xml stays well-formed (real xmllint) and carries the text without them", async () => {
    const res = await t.request("GET", `/api/v1/releases/${slug}/feed.xml?platform=darwin-arm64`);
    expect(res.status).toBe(200);
    const check = xmllintCheck(res.text);
    if (!check.ok) throw new Error(`xmllint rejected the appcast:\n${check.stderr}\n${res.text}`);
    expect(xmllintXPath(res.text, "string(/rss/channel/title)").stdout.trim()).toBe("Legacy & <Co>");
    expect(xmllintXPath(res.text, "string(/rss/channel/item/description)").stdout.trim()).toBe("<p>Notes</p> ]]> end");
  });

  test("feed.json and upgrade.json carry the same cleaned text", async () => {
    const feed = await t.request("GET", `/api/v1/releases/${slug}/feed.json?platform=darwin-arm64`);
    expect(feed.status).toBe(200);
    expect(feed.body[0].notes).toBe("<p>Notes</p> ]]> end");
    expect(feed.body[0].minimum_supported_message).toBe("Please update");
    const up = await t.request("GET", `/api/v1/releases/${slug}/upgrade.json?platform=darwin-arm64`);
    expect(up.status).toBe(200);
    expect(up.body.notes).toBe("<p>Notes</p> ]]> end");
    expect(up.body.minimum_supported_message).toBe("Please update");
  });
});
