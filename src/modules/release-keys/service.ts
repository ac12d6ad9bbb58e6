// Per-product Ed25519 release signing keys (spec: Product; DECISIONS: Releases and storage).
// One key pair signs both formats: Sparkle edSignature (Ed25519 over the raw file) and minisign
// prehashed `ED` for Tauri. Generated on first need, the seed sealed with AES-256-GCM under the
// signingKeyEncryption subkey (row id as AAD) in signing_keys (purpose "release", key_num = the
// 8-byte minisign key number). Rotation retires the old key but keeps it listed, so apps that
// still ship the old public key can be told which releases it verifies.
import { randomBytes } from "node:crypto";
import type { Deps } from "../../deps";
import { createSigner, generateSeed, type Ed25519Signer } from "../../crypto/ed25519";
import { isTrustedCommentValue, minisignPublicKeyFile, minisignSignatureFile, releaseTrustedComment } from "../../crypto/minisign";
import { expandSeed, signStream, StreamChangedError, type ExpandedEd25519Key } from "../../crypto/sparkle-stream";
import { SYSTEM_ACTOR, type Actor } from "../../shared/actor";
import { AppError } from "../../shared/errors";
import { activateKey, newSigningKeyRecord, openSeed } from "../keys/service";
import type { SigningKeyRecord } from "../keys/repo";
import { getProduct } from "../products/service";

export interface ReleaseSigningKey {
  kid: string;
  /** minisign key number, 8 bytes. */
  keyNum: Uint8Array;
  /** Ed25519 public key, 32 bytes. */
  publicKey: Uint8Array;
}

export interface ArtifactSignature {
  /** Sparkle edSignature: base64 of the 64-byte Ed25519 signature over the raw file bytes. */
  edSignature: string;
  /** Full 4-line minisign signature file text (prehashed ED), each line \n-terminated. */
  minisign: string;
  kid: string;
}

export interface SignArtifactInput {
  /** Opens a fresh stream over the artifact bytes; called once per streaming pass (twice). */
  open: () => Promise<ReadableStream<Uint8Array>>;
  /** BLAKE2b-512 of the artifact, as computed by hashStream at finalize. */
  blake2b512: Uint8Array;
  filename: string;
  version: string;
  /** Unix seconds for the minisign trusted comment. */
  timestamp: number;
}

/** A release key with its record, as the admin API lists it. */
export interface ReleaseKeyEntry extends ReleaseSigningKey {
  active: boolean;
  createdAt: Date;
  retiredAt: Date | null;
}

interface LoadedKey {
  key: ReleaseSigningKey;
  signer: Ed25519Signer;
  expanded: Promise<ExpandedEd25519Key>;
}

// Decrypted signers, by kid, per Secrets instance (one per running service): opening the sealed
// seed and building the KeyObject happen once per key, not per signature.
const loadedKeys = new WeakMap<object, Map<string, LoadedKey>>();

function toKey(record: SigningKeyRecord): ReleaseSigningKey {
  // Every release row is written with a key number (newReleaseKeyRecord); a row without one is corrupt.
  if (!record.keyNumHex) throw new AppError("INTERNAL_ERROR", { message: "A release signing key record is corrupt." });
  return {
    kid: record.kid,
    keyNum: new Uint8Array(Buffer.from(record.keyNumHex, "hex")),
    publicKey: new Uint8Array(Buffer.from(record.publicKeyHex, "hex")),
  };
}

function load(deps: Deps, record: SigningKeyRecord): LoadedKey {
  let byKid = loadedKeys.get(deps.secrets);
  if (!byKid) loadedKeys.set(deps.secrets, (byKid = new Map()));
  let loaded = byKid.get(record.kid);
  if (!loaded) {
    const seed = openSeed(deps.secrets, record);
    // The plaintext seed lives only until both signer forms are built from it.
    loaded = { key: toKey(record), signer: createSigner(seed), expanded: expandSeed(seed).finally(() => seed.fill(0)) };
    byKid.set(record.kid, loaded);
  }
  return loaded;
}

function newReleaseKeyRecord(deps: Deps, productId: string): SigningKeyRecord {
  const keyNumHex = randomBytes(8).toString("hex");
  return newSigningKeyRecord(deps.secrets, generateSeed(), "release", productId, deps.clock.now(), keyNumHex);
}

async function activeRecord(deps: Deps, productId: string, actor: Actor): Promise<SigningKeyRecord> {
  const existing = await deps.repos.signingKeys.findActive("release", productId);
  if (existing) return existing;
  const next = newReleaseKeyRecord(deps, productId);
  // onlyIfNoneActive: two concurrent first uses keep one key (activateKey re-checks under the scope's lock).
  return await deps.db.transaction(({ repos }) =>
    activateKey(repos, next, {
    onlyIfNoneActive: true,
    effects: {
      audit: {
        actor,
        action: "release_signing_key.create",
        entityType: "signing_key",
        entityId: next.kid,
        productId,
        changes: null,
        at: deps.clock.now(),
      },
    },
  }),
  );
}

/** The product's active release key, generated (and stored sealed) on first use. */
export async function getOrCreateReleaseKey(deps: Deps, productId: string, actor: Actor = SYSTEM_ACTOR): Promise<ReleaseSigningKey> {
  return toKey(await activeRecord(deps, productId, actor));
}

/** "untrusted comment: minisign public key <KEYID>\n<base64 PubkeyStruct>\n" (update-formats.md §3.1). */
export function minisignPublicKeyText(key: ReleaseSigningKey): string {
  return minisignPublicKeyFile(key.keyNum, key.publicKey);
}

/**
 * Signs one artifact with the product's active key: minisign prehashed over the finalize digest,
 * and Sparkle's edSignature in two streaming passes (memory stays bounded for multi-GB files).
 */
export async function signArtifact(deps: Deps, productId: string, input: SignArtifactInput): Promise<ArtifactSignature> {
  if (!isTrustedCommentValue(input.filename) || !isTrustedCommentValue(input.version)) {
    throw new AppError("VALIDATION_ERROR", {
      message: "The filename and version cannot contain control characters (minisign trusted comment).",
      details: { fields: { filename: "no control characters", version: "no control characters" } },
    });
  }
  const loaded = load(deps, await activeRecord(deps, productId, SYSTEM_ACTOR));
  const minisign = minisignSignatureFile({
    signer: loaded.signer,
    keyNum: loaded.key.keyNum,
    blake2b512: input.blake2b512,
    trustedComment: releaseTrustedComment({ timestamp: input.timestamp, filename: input.filename, version: input.version }),
  });
  let ed: Uint8Array;
  try {
    ed = await signStream(await loaded.expanded, input.open, input.blake2b512);
  } catch (e) {
    if (e instanceof StreamChangedError) {
      throw new AppError("CONFLICT", { message: "The stored artifact changed after it was finalized; finalize it again." });
    }
    throw e;
  }
  return { edSignature: Buffer.from(ed).toString("base64"), minisign, kid: loaded.key.kid };
}

function toEntry(record: SigningKeyRecord): ReleaseKeyEntry {
  return { ...toKey(record), active: record.active, createdAt: record.createdAt, retiredAt: record.retiredAt };
}

/** Every release key of the product, active first then newest first; creates the first key if none. */
export async function listReleaseKeys(deps: Deps, actor: Actor, productId: string): Promise<ReleaseKeyEntry[]> {
  const product = await getProduct(deps, actor, productId);
  await activeRecord(deps, product.id, actor);
  return (await deps.repos.signingKeys.list("release", product.id))
    .map(toEntry)
    .sort((a, b) => Number(b.active) - Number(a.active) || b.createdAt.getTime() - a.createdAt.getTime());
}

/** Retires the active key (still listed) and activates a fresh one for future publishes. */
export async function rotateReleaseKey(deps: Deps, actor: Actor, productId: string): Promise<ReleaseKeyEntry> {
  const product = await getProduct(deps, actor, productId);
  const previous = await deps.repos.signingKeys.findActive("release", product.id);
  const next = newReleaseKeyRecord(deps, product.id);
  const record = await deps.db.transaction(({ repos }) =>
    activateKey(repos, next, {
    onlyIfNoneActive: false,
    effects: {
      audit: {
        actor,
        action: "release_signing_key.rotate",
        entityType: "signing_key",
        entityId: next.kid,
        productId: product.id,
        changes: { previous_kid: previous?.kid ?? null },
        at: deps.clock.now(),
      },
    },
  }),
  );
  return toEntry(record);
}
