import { describe, expect, test } from "bun:test";
import { AppError } from "../../shared/errors";
import { checkListCursor, decodeListCursor, encodeListCursor, licenseListDriver, licenseListOrder, prefixUpperBound, searchBranches } from "./listing";

describe("searchBranches: one lookup per term shape", () => {
  test.each([
    ["KW-AAAAAAAA-BBBBBBBB-CCCCCCCC-DDDDDDDD", true, ["key"]],
    ["0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", false, ["id"]],
    ["@example.com", false, ["email_domain"]],
    ["alice@example.com", false, ["email"]],
    ["k2zd", false, ["key_hint", "external_customer", "external_workspace", "email_prefix"]],
    ["john", false, ["external_customer", "external_workspace", "email_prefix"]], // O is not in the key alphabet
    ["cus_123", false, ["external_customer", "external_workspace", "email_prefix"]],
  ] as const)("%s", (term, isKey, branches) => {
    expect(searchBranches(term, isKey)).toEqual([...branches]);
  });
});

test("prefixUpperBound: the last code point incremented (byte order), skipping surrogates", () => {
  expect(prefixUpperBound("abc")).toBe("abd");
  expect(prefixUpperBound("a\u{d7ff}")).toBe("a\u{e000}");
  expect(prefixUpperBound("é")).toBe("ê");
  expect(prefixUpperBound("a\u{10ffff}")).toBe("b");
  expect(prefixUpperBound("")).toBeNull();
  // Every string with the prefix sorts below the bound, bytewise (UTF-8).
  const bytes = (s: string) => Buffer.from(s, "utf8");
  for (const s of ["abc", "abc\u{10ffff}", "abcz", "abc\u{ffff}"]) expect(Buffer.compare(bytes(s), bytes(prefixUpperBound("abc")!))).toBe(-1);
});

test("order and driving index: the most selective filter drives, expiry and prefix pick their order", () => {
  expect(licenseListOrder({})).toBe("created");
  expect(licenseListOrder({ emailPrefix: "a" })).toBe("email");
  expect(licenseListOrder({ expiringBefore: new Date(0) })).toBe("valid_until");
  expect(licenseListDriver({ limit: 1 })).toBe("all");
  expect(licenseListDriver({ productId: "p", status: "active", planId: "q", limit: 1 })).toBe("productStatus");
  expect(licenseListDriver({ productId: "p", planId: "q", limit: 1 })).toBe("plan");
  expect(licenseListDriver({ productId: "p", email: "a@b", limit: 1 })).toBe("email");
  expect(licenseListDriver({ productId: "p", keyHash: "h", limit: 1 })).toBe("keyHash");
  expect(licenseListDriver({ productId: "p", planId: "q", expiringBefore: new Date(0), limit: 1 })).toBe("product");
  expect(licenseListDriver({ productId: "p", emailPrefix: "a", limit: 1 })).toBe("emailPrefix");
});

describe("cursors", () => {
  const filter = { productId: "p", limit: 50 };
  const cursor = encodeListCursor("created", filter, undefined, { t: 1000, id: "abc" });
  const refused = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(AppError);
      expect((e as AppError).code).toBe("VALIDATION_ERROR");
      return;
    }
    throw new Error("not refused");
  };

  test("round-trip in its own order and filter (the page size may change)", () => {
    expect(checkListCursor(decodeListCursor(cursor), { ...filter, limit: 10 })).toEqual({ t: 1000, id: "abc" });
  });
  test("refused with another order or filter, or when malformed", () => {
    refused(() => checkListCursor(decodeListCursor(cursor), { ...filter, expiringBefore: new Date(0) }));
    refused(() => checkListCursor(decodeListCursor(cursor), { productId: "other", limit: 50 }));
    refused(() => decodeListCursor("%%%"));
    refused(() => decodeListCursor(Buffer.from(JSON.stringify({ o: "email", f: "x", t: 1, id: "a" })).toString("base64url"))); // email order without e
    refused(() => decodeListCursor(Buffer.from(JSON.stringify({ o: "created", f: "x", t: 1e20, id: "a" })).toString("base64url")));
  });
  test("a cursor without an order (issued before orders existed) reads newest first under any filter", () => {
    const legacy = Buffer.from(JSON.stringify({ t: 5, id: "x" })).toString("base64url");
    expect(checkListCursor(decodeListCursor(legacy), { status: "active", limit: 5 })).toEqual({ t: 5, id: "x" });
    refused(() => checkListCursor(decodeListCursor(legacy), { expiringBefore: new Date(0), limit: 5 }));
  });
});
