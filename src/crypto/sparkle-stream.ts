// Plain (non-prehashed) Ed25519 over a stream, for Sparkle's edSignature: Sparkle verifies
// Ed25519(sk, whole file bytes) (update-formats.md §1.3), and artifacts can be many GB, so the
// message is never held in memory. RFC 8032 §5.1.6 needs the message twice:
//   r = SHA-512(prefix ‖ M) mod L,  R = [r]B,  k = SHA-512(R ‖ A ‖ M) mod L,  S = (r + k·s) mod L
// so we read it in two streaming passes. This is composition, not a new primitive (DECISIONS:
// Releases and storage): SHA-512 is node:crypto's, key expansion, the group order and point
// arithmetic are @noble/ed25519's. sparkle-stream.test.ts proves the bytes equal node:crypto's
// one-shot Ed25519 on many inputs.
import { boundedChunks } from "./chunks";
import { createHash } from "node:crypto";
import { etc, Point, utils } from "@noble/ed25519";

const L = Point.CURVE().n;

export interface ExpandedEd25519Key {
  /** Clamped secret scalar s (RFC 8032 §5.1.5), reduced mod L. */
  scalar: bigint;
  /** Upper half of SHA-512(seed), the nonce prefix. */
  prefix: Uint8Array;
  /** Encoded public key A. */
  publicKey: Uint8Array;
}

/** Expands a 32-byte seed once (cache the result per key, not per signature). */
export async function expandSeed(seed: Uint8Array): Promise<ExpandedEd25519Key> {
  const e = await utils.getExtendedPublicKeyAsync(seed);
  return { scalar: e.scalar, prefix: e.prefix, publicKey: e.pointBytes };
}

function leToBigint(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

function bigintTo32LE(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return out;
}

/**
 * Feeds the stream into `hash` and returns a BLAKE2b-512 fingerprint of exactly the bytes seen,
 * so the caller can prove both passes read the same message.
 */
async function pass(stream: ReadableStream<Uint8Array>, hash: ReturnType<typeof createHash>): Promise<string> {
  const seen = new Bun.CryptoHasher("blake2b512");
  for await (const chunk of boundedChunks(stream)) {
    hash.update(chunk);
    seen.update(chunk);
  }
  return seen.digest("hex");
}

export class StreamChangedError extends Error {
  constructor() {
    super("the message changed between the two signing passes");
    this.name = "StreamChangedError";
  }
}

/**
 * Ed25519 signature (64 bytes) of the bytes `open()` streams; `open` is called twice.
 *
 * If the two passes read different bytes, r (from pass 1) would be combined with a k from another
 * message: two such signatures sharing r reveal the secret scalar (s = ΔS/Δk). So both passes are
 * fingerprinted and nothing is returned unless they match; `expectedBlake2b512`, when given, must
 * match as well (the digest recorded when the artifact was finalized).
 */
export async function signStream(
  key: ExpandedEd25519Key,
  open: () => Promise<ReadableStream<Uint8Array>>,
  expectedBlake2b512?: Uint8Array,
): Promise<Uint8Array> {
  const h1 = createHash("sha512").update(key.prefix);
  const seen1 = await pass(await open(), h1);
  const r = etc.mod(leToBigint(h1.digest()), L);
  // r = 0 has probability 2^-252; @noble refuses to multiply by 0, which then fails loudly.
  const R = Point.BASE.multiply(r).toBytes();

  const h2 = createHash("sha512").update(R).update(key.publicKey);
  const seen2 = await pass(await open(), h2);
  if (seen1 !== seen2) throw new StreamChangedError();
  if (expectedBlake2b512 && Buffer.from(expectedBlake2b512).toString("hex") !== seen1) throw new StreamChangedError();
  const k = etc.mod(leToBigint(h2.digest()), L);
  const S = etc.mod(r + k * key.scalar, L);
  return etc.concatBytes(R, bigintTo32LE(S));
}
