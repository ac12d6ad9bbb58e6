import { createHash, createHmac, timingSafeEqual } from "node:crypto";

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

export function hmacSha256Hex(key: Uint8Array, data: string): string {
  return createHmac("sha256", key).update(data, "utf8").digest("hex");
}

/** Constant-time string comparison (lengths are not secret here: both sides are fixed-size digests). */
export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, "utf8");
  const bb = Buffer.from(b, "utf8");
  if (ab.length !== bb.length) return false;
  return timingSafeEqual(ab, bb);
}
