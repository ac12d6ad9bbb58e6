// Server-side Ed25519 through node:crypto (≈16× faster than @noble/ed25519 in Bun, identical bytes:
// see test/crypto). The KeyObject is built once per key and reused; never per request.
import { handedBack, handedOver } from "./offload";
import { createPrivateKey, createPublicKey, sign, verify, randomBytes, type KeyObject } from "node:crypto";

// DER prefixes for wrapping raw keys (RFC 8410): PKCS#8 for the 32-byte seed, SPKI for the public key.
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

export interface Ed25519Signer {
  readonly publicKey: Uint8Array; // 32 bytes
  sign(message: Uint8Array | string): Uint8Array; // 64 bytes
  /** The same signature made on node:crypto's thread pool, off the event loop (crypto/offload.ts). */
  signOffThread(message: Uint8Array | string): Promise<Uint8Array>;
}

export function generateSeed(): Uint8Array {
  return new Uint8Array(randomBytes(32));
}

export function privateKeyFromSeed(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new Error("Ed25519 seed must be 32 bytes");
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" });
}

export function publicKeyFromSeed(seed: Uint8Array): Uint8Array {
  const der = createPublicKey(privateKeyFromSeed(seed)).export({ format: "der", type: "spki" });
  return new Uint8Array(der.subarray(der.length - 32));
}

export function publicKeyObject(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: "der", type: "spki" });
}

export function publicKeyPem(raw: Uint8Array): string {
  return publicKeyObject(raw).export({ format: "pem", type: "spki" }).toString();
}

export function createSigner(seed: Uint8Array): Ed25519Signer {
  const key = privateKeyFromSeed(seed);
  const publicKey = publicKeyFromSeed(seed);
  return {
    publicKey,
    // node:crypto's Buffer is the Uint8Array returned (no copy: a verify signs on every call).
    sign: (message) => sign(null, typeof message === "string" ? Buffer.from(message, "utf8") : message, key),
    signOffThread: (message) =>
      new Promise((resolve, reject) => {
        const bytes = typeof message === "string" ? Buffer.from(message, "utf8") : message;
        handedOver();
        try {
          sign(null, bytes, key, (error, signature) => {
            handedBack();
            if (error) reject(error);
            else resolve(signature);
          });
        } catch (error) {
          // Refused before it was queued (the callback will not run).
          handedBack();
          reject(error);
        }
      }),
  };
}

export function verifySignature(publicKey: Uint8Array, message: Uint8Array | string, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  const msg = typeof message === "string" ? Buffer.from(message, "utf8") : message;
  return verify(null, msg, publicKeyObject(publicKey), signature);
}
