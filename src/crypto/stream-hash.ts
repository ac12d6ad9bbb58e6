// One streaming pass over an artifact computing what finalize and publish need: SHA-256 (spec
// `sha256`, hex), BLAKE2b-512 (the minisign prehash, update-formats.md §3.1) and the byte count.
// Memory stays bounded by the stream's chunk size, whatever the file size.
import { boundedChunks } from "./chunks";

export interface StreamDigest {
  sha256Hex: string;
  blake2b512: Uint8Array;
  size: number;
}

/** The same digest fed chunk by chunk, for bytes that flow somewhere else too (finalize's move). */
export function hashingSink(): { update(chunk: Uint8Array): void; digest(): StreamDigest } {
  const sha256 = new Bun.CryptoHasher("sha256");
  const blake = new Bun.CryptoHasher("blake2b512");
  let size = 0;
  return {
    update: (chunk) => {
      sha256.update(chunk);
      blake.update(chunk);
      size += chunk.byteLength;
    },
    digest: () => ({ sha256Hex: sha256.digest("hex"), blake2b512: new Uint8Array(blake.digest()), size }),
  };
}

export async function hashStream(stream: ReadableStream<Uint8Array>): Promise<StreamDigest> {
  const sink = hashingSink();
  for await (const chunk of boundedChunks(stream)) sink.update(chunk);
  return sink.digest();
}
