import { describe, expect, test } from "bun:test";
import { createPublicKey, verify as nodeVerify } from "node:crypto";
import { createSigner, generateSeed, publicKeyPem } from "./ed25519";
import { signToken, verifyToken } from "./token";

// RFC 8032 §7.1 TEST 1 seed, as in /work/shared/reference/update-formats.md §8.
const SEED = new Uint8Array(Buffer.from("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "hex"));
const signer = createSigner(SEED);

describe("signed token (spec: Signed token; update-formats §8)", () => {
  test("reference vector: the signature covers the ASCII bytes of the first segment", () => {
    const token = signToken(signer, { lic: "L-1", product: "demo", exp: 1893456000 });
    expect(token).toBe(
      "eyJsaWMiOiJMLTEiLCJwcm9kdWN0IjoiZGVtbyIsImV4cCI6MTg5MzQ1NjAwMH0.BdvbjotXUyTQXK6Uw4Lcwz9wWkeesfn9UInEftjphv7vIgTIuFVGp-d5nY6n3wECEHqfTV9eNZt07Yd33BHyDA",
    );
    // Not the signature over the raw payload bytes (the other, wrong reading of the spec).
    expect(token.split(".")[1]).not.toBe("0z5h--jA6Isi-Cmahg9Z-DofsZ2r6iogDp9eA43h_JQJO9F8NZPjyhKJPway7ltmyjAN7mKeQar4XMZrDVpLDw");
  });

  test("base64url without padding in both segments; node:crypto verifies the segment signature", () => {
    for (let i = 0; i < 50; i++) {
      const s = createSigner(generateSeed());
      const token = signToken(s, { lid: `lic-${i}`, ftr: { pro: true, seats: "5" }, pad: "x".repeat(i) });
      const [payload, sig] = token.split(".") as [string, string];
      expect(token.split(".").length).toBe(2);
      for (const part of [payload, sig]) expect(part).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.from(sig, "base64url").length).toBe(64);
      expect(nodeVerify(null, Buffer.from(payload, "ascii"), createPublicKey(publicKeyPem(s.publicKey)), Buffer.from(sig, "base64url"))).toBe(true);
      expect(verifyToken<Record<string, unknown>>(s.publicKey, token)).toEqual({ lid: `lic-${i}`, ftr: { pro: true, seats: "5" }, pad: "x".repeat(i) });
    }
  });

  test("verification refuses tampering, another key, padding and non-base64url characters", () => {
    // Claims chosen so that both segments use the URL-safe characters '-' and '_'.
    const urlSafe = (t: string) => t.split(".").every((part) => /[-_]/.test(part));
    let token = "";
    for (let i = 0; !urlSafe(token); i++) token = signToken(signer, { lid: "L-1", exp: 0, n: `~?>${i}` });
    const [payload, sig] = token.split(".") as [string, string];
    const standard = (s: string) => s.replaceAll("-", "+").replaceAll("_", "/");
    const forged = Buffer.from(JSON.stringify({ lid: "L-2", exp: 0 })).toString("base64url");
    for (const bad of [
      `${forged}.${sig}`,
      `${payload}.${sig.slice(0, -2)}AA`,
      `${payload}.${sig}=`,
      `${payload}=.${sig}`,
      `${standard(payload)}.${sig}`, // standard base64 alphabet
      `${payload}.${standard(sig)}`,
      `${payload}.${sig}.x`,
      payload,
      "",
    ]) {
      expect(verifyToken(signer.publicKey, bad)).toBeNull();
    }
    expect(verifyToken(createSigner(generateSeed()).publicKey, token)).toBeNull();
    expect(verifyToken<Record<string, unknown>>(signer.publicKey, token)).toMatchObject({ lid: "L-1", exp: 0 });
  });

  test("only the canonical encoding of a signature verifies (no second spelling of one token)", () => {
    const token = signToken(signer, { lid: "L-1", exp: 0 });
    const [payload, sig] = token.split(".") as [string, string];
    // 64 bytes take 86 base64url characters; the last one carries 2 bits, so 4 spellings decode alike.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(sig.at(-1)!);
    const twins = [1, 2, 3].map((d) => sig.slice(0, -1) + alphabet[(last & ~15) | ((last + d) & 15)]);
    for (const twin of twins) {
      expect(Buffer.from(twin, "base64url")).toEqual(Buffer.from(sig, "base64url"));
      expect(verifyToken(signer.publicKey, `${payload}.${twin}`)).toBeNull();
    }
    expect(verifyToken(signer.publicKey, token)).not.toBeNull();
  });
});
