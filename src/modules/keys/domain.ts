// The signing-key activation rule (DECISIONS: signing keys): one active key per (purpose, product).
import type { SigningKeyRecord } from "./repo";

export type KeyActivation = { kind: "keep"; key: SigningKeyRecord } | { kind: "activate"; retire: SigningKeyRecord | null; revive: SigningKeyRecord | null };

/**
 * What activating `next` does, given the scope's active key (`current`) and a stored row with
 * next's kid (`sameKid`), both read under the scope's lock:
 * - keep the active key when `onlyIfNoneActive` (a first start racing another node's: every node
 *   ends up with the same key) or when it already is `next`;
 * - otherwise retire the active key and activate `next`, reviving its row when the same key
 *   material was active before (e.g. LICENSE_SIGNING_KEY set back) instead of inserting a duplicate.
 */
export function planKeyActivation(current: SigningKeyRecord | null, sameKid: SigningKeyRecord | null, next: Pick<SigningKeyRecord, "kid">, onlyIfNoneActive: boolean): KeyActivation {
  if (current && (onlyIfNoneActive || current.kid === next.kid)) return { kind: "keep", key: current };
  return { kind: "activate", retire: current, revive: sameKid };
}
