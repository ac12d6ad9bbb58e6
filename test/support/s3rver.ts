// A real S3-compatible server for the storage contract suite: s3rver on 127.0.0.1, a free port,
// a fresh temp directory and one bucket. Known trap (STYLE.md): s3rver does NOT verify SigV4
// signatures (it only checks the access key id and the X-Amz-Date/X-Amz-Expires window against the
// real clock), so it proves request shapes, streaming and semantics, not signature correctness.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";

export interface RunningS3 {
  endpoint: string;
  bucket: string;
  /** s3rver's built-in account; any other key id is refused. */
  accessKey: string;
  secretKey: string;
  /** STORAGE_* variables for await createTestApp({ env }). */
  env: Record<string, string>;
  /** Takes the server down (a bucket that is down), keeping its port and objects for start(). */
  stop(): Promise<void>;
  /** Brings a stopped server back on the same port with the same objects. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startS3rver(bucket = "keyward-test"): Promise<RunningS3> {
  const directory = mkdtempSync(join(tmpdir(), "keyward-s3rver-"));
  const make = (port: number) => new S3rver({ address: "127.0.0.1", port, silent: true, directory, configureBuckets: [{ name: bucket }] });
  let server: S3rver | null = make(0);
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    accessKey: "S3RVER",
    secretKey: "S3RVER",
    env: {
      STORAGE_DRIVER: "s3",
      STORAGE_ENDPOINT: endpoint,
      STORAGE_BUCKET: bucket,
      STORAGE_ACCESS_KEY: "S3RVER",
      STORAGE_SECRET_KEY: "S3RVER",
      STORAGE_REGION: "us-east-1",
      STORAGE_FORCE_PATH_STYLE: "true",
    },
    async stop() {
      await server?.close();
      server = null;
    },
    async start() {
      if (server) return;
      server = make(port);
      await server.run();
    },
    async close() {
      await server?.close();
      server = null;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
