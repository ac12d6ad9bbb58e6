// Chooses the storage driver from config.storage.driver (DECISIONS: Releases and storage).
import type { Config } from "../../config";
import type { Clock } from "../../shared/clock";
import type { Secrets } from "../keys/secrets";
import type { Storage } from "./storage";
import { createLocalStorage } from "./local";
import { createS3Storage } from "./s3";
import { createDisabledStorage } from "./none";

export interface StorageDeps {
  config: Readonly<Config>;
  clock: Clock;
  secrets: Secrets;
}

export function createStorage({ config, clock, secrets }: StorageDeps): Storage {
  const s = config.storage;
  switch (s.driver) {
    case "local":
      return createLocalStorage({
        dir: s.localDir,
        baseUrl: config.baseUrl,
        signingKey: secrets.subkey("storageUrlSigning"),
        clock,
        putTtlSeconds: s.uploadUrlTtlSeconds,
        getTtlSeconds: s.downloadUrlTtlSeconds,
      });
    case "s3":
      // loadConfig guarantees bucket and credentials when the driver is s3.
      return createS3Storage({
        endpoint: s.endpoint,
        bucket: s.bucket!,
        accessKeyId: s.accessKey!,
        secretAccessKey: s.secretKey!,
        region: s.region,
        forcePathStyle: s.forcePathStyle,
        clock,
        putTtlSeconds: s.uploadUrlTtlSeconds,
        getTtlSeconds: s.downloadUrlTtlSeconds,
      });
    case "none":
      return createDisabledStorage();
  }
}
