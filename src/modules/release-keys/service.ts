// Per-product Ed25519 release signing keys (interface; implementation follows).
import type { Deps } from "../../deps";

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
  /** Opens a fresh stream over the artifact bytes; called once per streaming pass. */
  open: () => Promise<ReadableStream<Uint8Array>>;
  /** BLAKE2b-512 of the artifact, as computed by hashStream at finalize. */
  blake2b512: Uint8Array;
  filename: string;
  version: string;
  /** Unix seconds for the minisign trusted comment. */
  timestamp: number;
}

export declare function getOrCreateReleaseKey(deps: Deps, productId: string): ReleaseSigningKey;
export declare function signArtifact(deps: Deps, productId: string, input: SignArtifactInput): Promise<ArtifactSignature>;
export declare function minisignPublicKeyText(key: ReleaseSigningKey): string;
