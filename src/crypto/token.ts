// Signed token: base64url(payload) "." base64url(Ed25519 signature over the ASCII bytes of the first
// segment), no padding (spec: Signed token). Signing the segment, as JWS does, means a verifier never
// has to re-serialize JSON.
import type { Ed25519Signer } from "./ed25519";
import { verifySignature } from "./ed25519";
import { offloadSigning } from "./offload";

export interface TokenClaims {
  lid: string; // license id
  pid: string; // product id
  pln: string; // plan id
  sts: string; // license status
  idn: string; // identifier
  fpr: string; // fingerprint: first 16 hex of sha256("<identifier>:<product_id>")
  ftr: Record<string, boolean | string>; // features
  iat: number;
  exp: number; // 0 = never expires
  sup: number; // support end; 0 = unlimited
  grc: number; // grace days
  nce: string; // random nonce
  kid: string; // signing key id
  [extra: string]: unknown;
}

export function signToken(signer: Ed25519Signer, claims: Record<string, unknown>): string {
  const payload = encodePayload(claims);
  return joinToken(payload, signer.sign(payload));
}

/**
 * The same token, signed off the event loop when other requests are waiting on it and in place
 * otherwise (crypto/offload.ts): for the request paths that sign on every call (verify, activate).
 * Callers that must sign inside a synchronous transaction callback use signToken.
 */
export function signTokenWhenFree(signer: Ed25519Signer, claims: Record<string, unknown>): string | Promise<string> {
  const payload = encodePayload(claims);
  if (!offloadSigning()) return joinToken(payload, signer.sign(payload));
  return signer.signOffThread(payload).then((sig) => joinToken(payload, sig));
}

const encodePayload = (claims: Record<string, unknown>): string => Buffer.from(JSON.stringify(claims), "utf8").toString("base64url");

function joinToken(payload: string, sig: Uint8Array): string {
  // node:crypto signers return a Buffer already; a view of `sig.buffer` would make the engine
  // materialize the typed array's backing store (measured on the verify path).
  const signature = (Buffer.isBuffer(sig) ? sig : Buffer.from(sig)).toString("base64url");
  return `${payload}.${signature}`;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

/** Verifies and decodes; returns null on any malformation or bad signature. */
export function verifyToken<T = TokenClaims>(publicKey: Uint8Array, token: string): T | null {
  const parts = token.split(".");
  if (parts.length !== 2) return null;
  const [payload, sig] = parts as [string, string];
  if (!B64URL.test(payload) || !B64URL.test(sig)) return null;
  const signature = Buffer.from(sig, "base64url");
  // Canonical encoding only: the last character of 64 bytes carries 2 bits, so without this check
  // four different strings would verify as the same token.
  if (signature.toString("base64url") !== sig) return null;
  if (!verifySignature(publicKey, payload, signature)) return null;
  try {
    return JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as T;
  } catch {
    return null;
  }
}
