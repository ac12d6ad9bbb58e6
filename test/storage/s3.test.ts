// The S3 driver against a real S3-compatible server (s3rver) on 127.0.0.1. Expiry and tampering are
// not tested here: s3rver does not verify SigV4 signatures (test/support/s3rver.ts), and its expiry
// check uses the real clock. The local driver's suite covers both for the URLs Keyward signs itself.
import { createTestApp } from "../support/app";
import { startS3rver } from "../support/s3rver";
import { storageContract } from "./contract";

storageContract("s3 (s3rver)", async () => {
  const s3 = await startS3rver();
  const t = await createTestApp({ env: s3.env });
  return {
    storage: t.deps.storage,
    reach: (url) => url,
    async close() {
      await t.close();
      await s3.close();
    },
  };
});
