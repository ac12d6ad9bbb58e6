import { describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { createSigner, generateSeed, verifySignature } from "./ed25519";
import { expandSeed, signStream, StreamChangedError } from "./sparkle-stream";

/** A stream of `data` cut at random boundaries (different cuts on every open). */
function opener(data: Uint8Array): () => Promise<ReadableStream<Uint8Array>> {
  return async () => {
    let at = 0;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= data.length) return controller.close();
        const n = 1 + Math.floor(Math.random() * Math.min(data.length - at, 70_000));
        // A copy: a consumer holding on to chunks must not see them change.
        controller.enqueue(data.slice(at, at + n));
        at += n;
      },
    });
  };
}

describe("streaming Ed25519 (Sparkle edSignature)", () => {
  test("the §3.6 Sparkle vector: edSignature of 'test' with the RFC 8032 TEST 1 seed", async () => {
    const seed = Buffer.from("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "hex");
    const key = await expandSeed(seed);
    expect(Buffer.from(key.publicKey).toString("base64")).toBe("11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=");
    const sig = await signStream(key, opener(new TextEncoder().encode("test")));
    expect(Buffer.from(sig).toString("base64")).toBe(
      "j5iwJkIn9h8Ja3jd47DwDRkB7P4QUF5BRzkGkHpSNWvpUxrXbU0B2wdDTUiTXvVR3lBULDNm0/t1DY8GBoxfCA==",
    );
  });

  test("RFC 8032 §7.1 TEST 1 (empty message)", async () => {
    const key = await expandSeed(Buffer.from("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "hex"));
    const sig = await signStream(key, opener(new Uint8Array(0)));
    expect(Buffer.from(sig).toString("hex")).toBe(
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    );
  });

  test("byte-identical to node:crypto one-shot Ed25519 on many keys, sizes and chunkings", async () => {
    const sizes = [0, 1, 2, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000, 65_536, 65_537, 1_048_576];
    for (let i = 0; i < 20; i++) sizes.push(Math.floor(Math.random() * 200_000));
    for (const size of sizes) {
      const seed = generateSeed();
      const data = new Uint8Array(randomBytes(size));
      const expected = createSigner(seed).sign(data);
      const actual = await signStream(await expandSeed(seed), opener(data));
      expect(Buffer.from(actual).toString("hex")).toBe(Buffer.from(expected).toString("hex"));
      expect(verifySignature(createSigner(seed).publicKey, data, actual)).toBe(true);
    }
  });

  test("refuses to sign when the two passes read different bytes (nonce-reuse guard)", async () => {
    const key = await expandSeed(generateSeed());
    const a = new Uint8Array(randomBytes(1000));
    const b = a.slice();
    b[999] = b[999]! ^ 1;
    let calls = 0;
    const flipping = () => opener(calls++ === 0 ? a : b)();
    await expect(signStream(key, flipping)).rejects.toBeInstanceOf(StreamChangedError);
  });

  test("checks the digest recorded at finalize when given", async () => {
    const key = await expandSeed(generateSeed());
    const data = new Uint8Array(randomBytes(5000));
    const right = new Uint8Array(createHash("blake2b512").update(data).digest());
    const wrong = right.slice();
    wrong[0] = wrong[0]! ^ 1;
    expect((await signStream(key, opener(data), right)).length).toBe(64);
    await expect(signStream(key, opener(data), wrong)).rejects.toBeInstanceOf(StreamChangedError);
  });
});
