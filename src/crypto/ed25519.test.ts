import { describe, expect, test } from "bun:test";
import { randomBytes, createPublicKey, verify as nodeVerify } from "node:crypto";
import * as noble from "@noble/ed25519";
import { createSigner, generateSeed, publicKeyFromSeed, publicKeyPem, verifySignature } from "./ed25519";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const fromHex = (h: string) => new Uint8Array(Buffer.from(h, "hex"));

describe("Ed25519 (DECISIONS: signing must match any standard implementation)", () => {
  test("RFC 8032 §7.1 TEST 1 and TEST 2", () => {
    const t1 = createSigner(fromHex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"));
    expect(hex(t1.publicKey)).toBe("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
    expect(hex(t1.sign(new Uint8Array(0)))).toBe(
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    );
    const t2 = createSigner(fromHex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb"));
    expect(hex(t2.publicKey)).toBe("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c");
    expect(hex(t2.sign(fromHex("72")))).toBe(
      "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
    );
  });

  test("byte-identical to @noble/ed25519 and verified by node:crypto on 200 random keys and messages", async () => {
    for (let i = 0; i < 200; i++) {
      const seed = generateSeed();
      const message = new Uint8Array(randomBytes(i * 13));
      const signer = createSigner(seed);
      const ours = signer.sign(message);
      expect(hex(ours)).toBe(hex(await noble.signAsync(message, seed)));
      expect(hex(signer.publicKey)).toBe(hex(await noble.getPublicKeyAsync(seed)));
      expect(nodeVerify(null, message, createPublicKey(publicKeyPem(signer.publicKey)), ours)).toBe(true);
      expect(await noble.verifyAsync(ours, message, signer.publicKey)).toBe(true);
    }
  });

  test("string messages are signed as their UTF-8 bytes", () => {
    const signer = createSigner(generateSeed());
    expect(hex(signer.sign("héllo ✓"))).toBe(hex(signer.sign(new TextEncoder().encode("héllo ✓"))));
  });

  test("verifySignature accepts the real signature and refuses any change", () => {
    const seed = generateSeed();
    const signer = createSigner(seed);
    const msg = new TextEncoder().encode("license payload");
    const sig = signer.sign(msg);
    expect(verifySignature(signer.publicKey, msg, sig)).toBe(true);
    const flipped = sig.slice();
    flipped[10]! ^= 1;
    expect(verifySignature(signer.publicKey, msg, flipped)).toBe(false);
    expect(verifySignature(signer.publicKey, "license payloaD", sig)).toBe(false);
    expect(verifySignature(createSigner(generateSeed()).publicKey, msg, sig)).toBe(false);
    expect(verifySignature(signer.publicKey, msg, sig.slice(0, 63))).toBe(false);
  });

  test("public key from seed matches the signer's; seeds must be 32 bytes", () => {
    const seed = generateSeed();
    expect(publicKeyFromSeed(seed)).toEqual(createSigner(seed).publicKey);
    expect(() => createSigner(new Uint8Array(31))).toThrow();
    expect(generateSeed()).not.toEqual(generateSeed());
  });
});
