// The master key and its HKDF subkeys. Loaded once at boot; nothing derives keys per request.
import { existsSync, readFileSync, writeFileSync, mkdirSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { Config } from "../../config";
import type { Logger } from "../../shared/logger";
import { deriveSubkey, type KeyPurpose } from "../../crypto/hkdf";

export interface Secrets {
  subkey(purpose: KeyPurpose): Uint8Array;
}

export function secretsFromMaster(master: Uint8Array): Secrets {
  const cache = new Map<KeyPurpose, Uint8Array>();
  return {
    subkey(purpose) {
      let k = cache.get(purpose);
      if (!k) {
        k = deriveSubkey(master, purpose);
        cache.set(purpose, k);
      }
      return k;
    },
  };
}

export const GENERATED_MASTER_KEY_FILE = "master.key";

/**
 * The database holds keys sealed under another master key: a node started without the deployment's
 * key (a new DATA_DIR generated one, or RELEASE_KEY_ENCRYPTION_KEY differs), or a restore under the
 * wrong key. Nothing can be signed, so the boot stops and says which key it used.
 */
export class MasterKeyMismatchError extends Error {
  constructor(kid: string, cause: unknown) {
    super(`the master key does not open the token-signing key stored in the database (kid ${kid})`, { cause });
    this.name = "MasterKeyMismatchError";
  }
}

/** Where the master key came from, for messages (never the key itself). */
export function masterKeySource(config: Pick<Config, "masterKeyHex" | "dataDir">): string {
  return config.masterKeyHex ? "RELEASE_KEY_ENCRYPTION_KEY" : join(config.dataDir, GENERATED_MASTER_KEY_FILE);
}

/**
 * RELEASE_KEY_ENCRYPTION_KEY, or outside production a key generated into DATA_DIR (mode 0600) with a
 * warning, so the first local start works (DECISIONS: Keys and secrets). Production refuses this in config.
 */
export function loadMasterKey(config: Pick<Config, "masterKeyHex" | "dataDir">, logger: Logger): Uint8Array {
  if (config.masterKeyHex) return new Uint8Array(Buffer.from(config.masterKeyHex, "hex"));
  const path = join(config.dataDir, GENERATED_MASTER_KEY_FILE);
  if (existsSync(path)) {
    const hex = readFileSync(path, "utf8").trim();
    if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error(`${path} does not hold a 64-hex master key`);
    return new Uint8Array(Buffer.from(hex, "hex"));
  }
  mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(path, key.toString("hex") + "\n", { mode: 0o600, flag: "wx" });
  chmodSync(path, 0o600);
  logger.warn("generated a master key; set RELEASE_KEY_ENCRYPTION_KEY for production", { path });
  return new Uint8Array(key);
}
