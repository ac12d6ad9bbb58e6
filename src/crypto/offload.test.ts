import { describe, expect, test } from "bun:test";
import { createSigner, generateSeed } from "./ed25519";
import { availableParallelism } from "node:os";
import { offloadRule, outstandingSignatures } from "./offload";
import { signToken, signTokenWhenFree, verifyToken } from "./token";

// RFC 8032 §7.1 TEST 1 seed: Ed25519 is deterministic, so both ways must give the same bytes.
const SEED = new Uint8Array(Buffer.from("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "hex"));
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("signing off the event loop (crypto/offload.ts)", () => {
  test("the first request of a turn signs in place, the ones after it in the same turn and while signatures are out are handed over", async () => {
    const offloadSigning = offloadRule(2);
    await nextTurn();
    expect(offloadSigning()).toBe(false);
    expect(offloadSigning()).toBe(true);
    expect(offloadSigning()).toBe(true);
    await nextTurn();
    expect(offloadSigning()).toBe(false);
    await nextTurn();
    // A signature out on the pool keeps the next turn's first request off the loop too.
    const signer = createSigner(generateSeed());
    const out = signer.signOffThread("payload");
    expect(outstandingSignatures()).toBe(1);
    // The turn is closed (nothing asked since it began): only the signature out says "hand over".
    expect(offloadSigning()).toBe(true);
    await out;
    expect(outstandingSignatures()).toBe(0);
    await nextTurn();
    expect(offloadSigning()).toBe(false);
  });

  test("with one CPU every signature stays on the event loop, even in a burst or with signatures out", async () => {
    const oneCore = offloadRule(1);
    const signer = createSigner(generateSeed());
    const out = signer.signOffThread("payload");
    expect([oneCore(), oneCore(), oneCore()]).toEqual([false, false, false]);
    await out;
  });

  test("the thread pool's signature is the event loop's, byte for byte, and a refused message settles the count", async () => {
    const signer = createSigner(SEED);
    for (const message of ["", "a", "x".repeat(600), "ünïcödé"]) {
      expect(Buffer.from(await signer.signOffThread(message))).toEqual(Buffer.from(signer.sign(message)));
    }
    await expect(signer.signOffThread(42 as unknown as string)).rejects.toThrow();
    expect(outstandingSignatures()).toBe(0);
  });

  test("a burst of tokens signed when free: in place first, then on the pool, every one equal to the synchronous token", async () => {
    const signer = createSigner(SEED);
    await nextTurn();
    const claims = Array.from({ length: 40 }, (_, i) => ({ lid: `L-${i}`, ftr: { pro: true }, nce: `n${i}` }));
    const issued = claims.map((c) => signTokenWhenFree(signer, c));
    expect(typeof issued[0]).toBe("string");
    // Handed over only where there is a second CPU to sign on.
    expect(issued.slice(1).every((t) => t instanceof Promise)).toBe(availableParallelism() > 1);
    const tokens = await Promise.all(issued);
    expect(tokens).toEqual(claims.map((c) => signToken(signer, c)));
    for (const [i, t] of tokens.entries()) expect(verifyToken<Record<string, unknown>>(signer.publicKey, t)).toEqual(claims[i]!);
    expect(outstandingSignatures()).toBe(0);
  });
});
