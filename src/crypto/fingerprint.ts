import { sha256Hex } from "./hash";

/**
 * Offline fingerprint (spec: Offline fingerprint; DECISIONS: Signed token): the first 16 hex characters
 * of SHA-256 over "<identifier>:<product_id>". Clients recompute it and compare with the `fpr` claim.
 */
export function fingerprint(identifier: string, productId: string): string {
  return sha256Hex(`${identifier}:${productId}`).slice(0, 16);
}
