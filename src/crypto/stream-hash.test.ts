import { describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { hashStream } from "./stream-hash";

function chunked(data: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const parts: Uint8Array[] = [];
  let at = 0;
  for (const c of [...cuts, data.length]) {
    parts.push(data.subarray(at, c));
    at = c;
  }
  return new ReadableStream({
    pull(controller) {
      const next = parts.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
  });
}

describe("hashStream", () => {
  test("BLAKE2b-512 of 'test' is the §3.6 value", async () => {
    const d = await hashStream(chunked(new TextEncoder().encode("test"), [1, 3]));
    expect(Buffer.from(d.blake2b512).toString("hex")).toBe(
      "a71079d42853dea26e453004338670a53814b78137ffbed07603a41d76a483aa9bc33b582f77d30a65e6f29a896c0411f38312e1d66e0bf16386c86a89bea572",
    );
    expect(d.size).toBe(4);
  });

  test("equals node:crypto SHA-256 and BLAKE2b-512 for random sizes and chunk boundaries", async () => {
    for (const size of [0, 1, 63, 64, 65, 127, 128, 129, 4096, 1_000_003]) {
      const data = new Uint8Array(randomBytes(size));
      const cuts = Array.from({ length: 5 }, () => Math.floor(Math.random() * (size + 1))).sort((a, b) => a - b);
      const d = await hashStream(chunked(data, cuts));
      expect(d.size).toBe(size);
      expect(d.sha256Hex).toBe(createHash("sha256").update(data).digest("hex"));
      expect(Buffer.from(d.blake2b512).equals(createHash("blake2b512").update(data).digest())).toBe(true);
    }
  });
});
