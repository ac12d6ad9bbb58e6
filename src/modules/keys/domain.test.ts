import { expect, test } from "bun:test";
import { planKeyActivation } from "./domain";
import type { SigningKeyRecord } from "./repo";

const key = (kid: string, active = true): SigningKeyRecord => ({
  id: `id-${kid}`,
  kid,
  purpose: "token",
  productId: null,
  publicKeyHex: "ab",
  privateKeyEncrypted: "x",
  keyNumHex: null,
  active,
  createdAt: new Date(0),
  retiredAt: active ? null : new Date(1),
});

test("a first start inserts; a racing first start keeps the key another node activated", () => {
  expect(planKeyActivation(null, null, key("n"), true)).toEqual({ kind: "activate", retire: null, revive: null });
  expect(planKeyActivation(key("a"), null, key("n"), true)).toEqual({ kind: "keep", key: key("a") });
});

test("a rotation retires the active key; the same key again is kept; a retired kid is revived", () => {
  expect(planKeyActivation(key("a"), null, key("n"), false)).toEqual({ kind: "activate", retire: key("a"), revive: null });
  expect(planKeyActivation(key("a"), key("a"), key("a"), false)).toEqual({ kind: "keep", key: key("a") });
  expect(planKeyActivation(key("a"), key("old", false), key("old"), false)).toEqual({ kind: "activate", retire: key("a"), revive: key("old", false) });
});
