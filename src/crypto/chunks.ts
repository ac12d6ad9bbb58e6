// Iterates a byte stream for hashing or signing. Each chunk is garbage once processed, but Bun's GC
// lets discarded chunks pile up during a tight multi-GB read: a 2 GB finalize + publish grew the
// server's RSS by 99 MB. A synchronous collection every `gcEveryBytes` bounds the footprint by that
// window (measured: +42 MB). An asynchronous hint (Bun.gc(false)) did not (+81 MB). The price: a 2 GB
// publish took 13.7 s instead of 11.4 s, and other requests wait through each short collection.
export const GC_WINDOW_BYTES = 64 * 1024 * 1024;

export async function* boundedChunks(stream: ReadableStream<Uint8Array>, gcEveryBytes = GC_WINDOW_BYTES): AsyncGenerator<Uint8Array> {
  let sinceGc = 0;
  for await (const chunk of stream) {
    yield chunk;
    sinceGc += chunk.byteLength;
    if (sinceGc >= gcEveryBytes) {
      sinceGc = 0;
      Bun.gc(true);
    }
  }
}
