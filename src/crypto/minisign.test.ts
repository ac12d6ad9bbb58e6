import { describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { createSigner, generateSeed } from "./ed25519";
import { minisignKeyId, minisignPublicKeyFile, minisignSignatureFile, releaseTrustedComment } from "./minisign";
import { minisignVerify } from "../../test/support/minisign-cli";
import { toolTest } from "../../test/support/tools";

const minisignTest = toolTest("minisign");

// update-formats.md §3.6: RFC 8032 §7.1 TEST 1 seed, keynum 01..08, message "test".
const SEED = Buffer.from("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "hex");
const KEYNUM = Buffer.from("0102030405060708", "hex");
const VECTOR_PK = "untrusted comment: minisign public key 0807060504030201\nRWQBAgMEBQYHCNdamAGCsQq31Uv+08lkBzoO4XLz2qYjJa8CGmj3B1Ea\n";
const VECTOR_SIG_LINES = [
  "RUQBAgMEBQYHCEjwv3RJYe7AnAHqtQEEFcdr6aklTnVos8g10MQGVv+aAguNmuHOByG1kVMID1jNePEwVM+B4ZVHZuiP1fwDZwU=",
  "trusted comment: timestamp:1700000000\tfile:test.bin\tversion:1.2.3",
  "YAZQuU4i9dy6RvoNhUShsavifw28B4NHtH+xZf/vJxe6SZqLs7MMpFClsOrRspLZGtcxHKGzuXQV4/lIEJxvBg==",
];
const blake = (m: Uint8Array | string) => new Uint8Array(createHash("blake2b512").update(m).digest());

function vectorSignature(untrustedComment?: string): string {
  return minisignSignatureFile({
    signer: createSigner(SEED),
    keyNum: KEYNUM,
    blake2b512: blake("test"),
    trustedComment: releaseTrustedComment({ timestamp: 1700000000, filename: "test.bin", version: "1.2.3" }),
    untrustedComment,
  });
}

describe("minisign files", () => {
  test("key id is the key number reversed, upper-case hex (§3.1)", () => {
    expect(minisignKeyId(KEYNUM)).toBe("0807060504030201");
  });

  test("public key file matches the §3.6 vector byte for byte", () => {
    expect(minisignPublicKeyFile(KEYNUM, createSigner(SEED).publicKey)).toBe(VECTOR_PK);
  });

  test("prehashed signature lines 2-4 match the §3.6 vector byte for byte", () => {
    const lines = vectorSignature("signature from minisign secret key").split("\n");
    expect(lines).toEqual(["untrusted comment: signature from minisign secret key", ...VECTOR_SIG_LINES, ""]);
    // Our own untrusted comment changes only line 1 (it is not signed).
    expect(vectorSignature().split("\n")[0]).toBe("untrusted comment: signature from keyward secret key");
    expect(vectorSignature().split("\n").slice(1)).toEqual([...VECTOR_SIG_LINES, ""]);
  });

  test("the Tauri signature string is base64 of the whole 4-line text (§3.6)", () => {
    const tauri = Buffer.from(vectorSignature("signature from minisign secret key")).toString("base64");
    expect(tauri).toHaveLength(416);
    expect(tauri.startsWith("dW50cnVzdGVkIGNvbW1lbnQ6IHNpZ25hdHVyZSBmcm9tIG1pbmlzaWduIHNlY3JldCBrZXkKUlVRQkFnTUVCUVlIQ0Vq")).toBe(true);
    expect(Buffer.from(VECTOR_PK).toString("base64")).toBe(
      "dW50cnVzdGVkIGNvbW1lbnQ6IG1pbmlzaWduIHB1YmxpYyBrZXkgMDgwNzA2MDUwNDAzMDIwMQpSV1FCQWdNRUJRWUhDTmRhbUFHQ3NRcTMxVXYrMDhsa0J6b080WEx6MnFZakphOENHbWozQjFFYQo=",
    );
  });

  test("trusted comment refuses values that would break its fields or lines", () => {
    for (const bad of ["a\tb", "a\nb", "a\rb", ""]) {
      expect(() => releaseTrustedComment({ timestamp: 1, filename: bad, version: "1.0.0" })).toThrow(RangeError);
      expect(() => releaseTrustedComment({ timestamp: 1, filename: "f", version: bad })).toThrow(RangeError);
    }
    expect(releaseTrustedComment({ timestamp: 5, filename: "Äpp 1.0.dmg", version: "1.0.0-beta.1" })).toBe(
      "timestamp:5\tfile:Äpp 1.0.dmg\tversion:1.0.0-beta.1",
    );
  });
});

describe("the real minisign -V", () => {
  minisignTest("verifies the §3.6 vector signature produced by our code", async () => {
    const r = await minisignVerify({ publicKeyFile: VECTOR_PK, message: "test", signatureFile: vectorSignature(), filename: "test.bin" });
    expect(r.output).toContain("Trusted comment: timestamp:1700000000\tfile:test.bin\tversion:1.2.3");
    expect(r.ok).toBe(true);
  });

  minisignTest("verifies signatures of random keys and messages, and rejects a tampered file or comment", async () => {
    const seed = generateSeed();
    const signer = createSigner(seed);
    const keyNum = new Uint8Array(randomBytes(8));
    const pub = minisignPublicKeyFile(keyNum, signer.publicKey);
    const message = new Uint8Array(randomBytes(100_000));
    const sig = minisignSignatureFile({
      signer,
      keyNum,
      blake2b512: blake(message),
      trustedComment: releaseTrustedComment({ timestamp: 1_800_000_000, filename: "App-2.0.0.AppImage", version: "2.0.0" }),
    });
    expect((await minisignVerify({ publicKeyFile: pub, message, signatureFile: sig })).ok).toBe(true);

    const tampered = message.slice();
    tampered[500] = tampered[500]! ^ 1;
    const r1 = await minisignVerify({ publicKeyFile: pub, message: tampered, signatureFile: sig });
    expect(r1.ok).toBe(false);
    expect(r1.exitCode).not.toBe(0);

    const forgedComment = sig.replace("version:2.0.0", "version:9.0.0");
    const r2 = await minisignVerify({ publicKeyFile: pub, message, signatureFile: forgedComment });
    expect(r2.ok).toBe(false);
    expect(r2.exitCode).not.toBe(0);

    // Another key (same key number would still fail on the signature; here the id differs too).
    const other = minisignPublicKeyFile(new Uint8Array(randomBytes(8)), createSigner(generateSeed()).publicKey);
    expect((await minisignVerify({ publicKeyFile: other, message, signatureFile: sig })).ok).toBe(false);
  });
});
