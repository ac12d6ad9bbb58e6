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
  /** STORAGE_* variables for createTestApp({ env }). */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startS3rver(bucket = "keyward-test"): Promise<RunningS3> {
  const directory = mkdtempSync(join(tmpdir(), "keyward-s3rver-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
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
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
