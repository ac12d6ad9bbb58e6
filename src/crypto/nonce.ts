// Token nonces (DECISIONS: Signed token, `nce`): 12 random bytes, base64url. They are drawn from a
// buffer the CSPRNG fills 256 nonces at a time: a randomBytes call per token cost more than the
// rest of building the claims. Each byte is handed out once; a spent buffer is replaced, never reused.
import { randomBytes } from "node:crypto";

export const NONCE_BYTES = 12;
const NONCES_PER_FILL = 256;

let pool = randomBytes(NONCE_BYTES * NONCES_PER_FILL);
let next = 0;

export function tokenNonce(): string {
  if (next === pool.length) {
    pool = randomBytes(NONCE_BYTES * NONCES_PER_FILL);
    next = 0;
  }
  const nonce = pool.toString("base64url", next, next + NONCE_BYTES);
  next += NONCE_BYTES;
  return nonce;
}
