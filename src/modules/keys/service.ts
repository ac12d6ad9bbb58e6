// License-token signing keys. The active key's KeyObject is built once at boot and on rotation, never
// per request (verify is the hot path). Retired keys stay listed so clients keep trusting old tokens.
import { seal, open } from "../../crypto/aead";
import { createSigner, generateSeed, publicKeyFromSeed, publicKeyPem, type Ed25519Signer } from "../../crypto/ed25519";
import { sha256Hex } from "../../crypto/hash";
import { newId } from "../../shared/ids";
import type { Clock } from "../../shared/clock";
import type { Actor } from "../../shared/actor";
import { assertSystemWide } from "../../shared/actor";
import { MasterKeyMismatchError, type Secrets } from "./secrets";
import type { SigningKeyRecord, SigningKeyRepo } from "./repo";
import type { Repos } from "../../deps";
import type { Effects } from "../outbox/effects";
import { planKeyActivation } from "./domain";

export interface ActiveSigningKey {
  kid: string;
  publicKeyHex: string;
  /** SPKI PEM of the public key, built with the signer (GET /license/pubkey serves it). */
  pem: string;
  signer: Ed25519Signer;
}

export function kidFor(publicKey: Uint8Array): string {
  return sha256Hex(publicKey).slice(0, 16);
}

export function sealSeed(secrets: Secrets, rowId: string, seed: Uint8Array): string {
  return seal(secrets.subkey("signingKeyEncryption"), seed, rowId);
}

export function openSeed(secrets: Secrets, record: Pick<SigningKeyRecord, "id" | "privateKeyEncrypted">): Uint8Array {
  return open(secrets.subkey("signingKeyEncryption"), record.privateKeyEncrypted, record.id);
}

export function newSigningKeyRecord(
  secrets: Secrets,
  seed: Uint8Array,
  purpose: SigningKeyRecord["purpose"],
  productId: string | null,
  now: Date,
  keyNumHex: string | null = null,
): SigningKeyRecord {
  const id = newId();
  const publicKey = publicKeyFromSeed(seed);
  return {
    id,
    kid: kidFor(publicKey),
    purpose,
    productId,
    publicKeyHex: Buffer.from(publicKey).toString("hex"),
    privateKeyEncrypted: sealSeed(secrets, id, seed),
    keyNumHex,
    active: true,
    createdAt: now,
    retiredAt: null,
  };
}

export interface TokenKeyring {
  /** The active key as last seen by this node (hot path: no I/O). */
  active(): ActiveSigningKey;
  list(): Promise<SigningKeyRecord[]>;
  rotate(actor: Actor): Promise<SigningKeyRecord>;
  /**
   * Re-reads the active key from the database and switches to it if another node rotated it. Run
   * every `refreshMs` by a timer (createTokenKeyring), so a rotation anywhere is used everywhere
   * within that time, without restarts.
   */
  refresh(): Promise<void>;
  /** Stops the refresh timer (shutdown). */
  stop(): void;
}

/** How often each node re-reads the active token-signing key (one indexed read). */
export const TOKEN_KEY_REFRESH_MS = 1000;

/**
 * Activates `next` in the caller's unit of work: the (purpose, product) scope locked by name (a
 * first start has no row to lock), the rule decides (domain.ts planKeyActivation), the rows and
 * `effects` are written. Returns the active key after: `next`, a revived row, or the key kept.
 */
export async function activateKey(
  repos: Pick<Repos, "signingKeys" | "outbox">,
  next: SigningKeyRecord,
  opts: { onlyIfNoneActive: boolean; effects?: Effects },
): Promise<SigningKeyRecord> {
  const keys = repos.signingKeys;
  await keys.lockScope(next.purpose, next.productId);
  const current = await keys.findActive(next.purpose, next.productId);
  const plan = planKeyActivation(current, await keys.findByKid(next.kid), next, opts.onlyIfNoneActive);
  if (plan.kind === "keep") return plan.key;
  if (plan.retire) await keys.retire(plan.retire.id, next.createdAt);
  if (plan.revive) await keys.revive(plan.revive.id);
  else await keys.insert(next);
  if (opts.effects) await repos.outbox.writeEffects(opts.effects);
  return plan.revive ? { ...plan.revive, active: true, retiredAt: null } : { ...next, active: true };
}

export async function createTokenKeyring(deps: {
  repo: SigningKeyRepo;
  /** Runs a unit of work (DataStore.transaction): activations run in one. */
  transaction: <T>(fn: (repos: Repos) => Promise<T>) => Promise<T>;
  secrets: Secrets;
  clock: Clock;
  configuredSeedHex: string | null;
  refreshMs?: number;
  onRefreshError?: (error: unknown) => void;
}): Promise<TokenKeyring> {
  const { repo, secrets, clock } = deps;
  const activate = (next: SigningKeyRecord, opts: { onlyIfNoneActive: boolean; effects?: Effects }) => deps.transaction((repos) => activateKey(repos, next, opts));
  const load = (record: SigningKeyRecord): ActiveSigningKey => ({
    kid: record.kid,
    publicKeyHex: record.publicKeyHex,
    pem: publicKeyPem(Buffer.from(record.publicKeyHex, "hex")),
    signer: createSigner(openSeed(secrets, record)),
  });

  // At boot, a stored key this master key cannot open means the node has the wrong master key.
  const loadAtBoot = (record: SigningKeyRecord): ActiveSigningKey => {
    try {
      return load(record);
    } catch (e) {
      throw new MasterKeyMismatchError(record.kid, e);
    }
  };

  let current: ActiveSigningKey;
  const stored = await repo.findActive("token", null);
  if (deps.configuredSeedHex) {
    // Checked before the pinned key replaces it: a node with the wrong master key would otherwise
    // seal its pinned key under that key, and every other node would fail to open it.
    if (stored) loadAtBoot(stored);
    // LICENSE_SIGNING_KEY pins the key: it becomes the active one (a generated key is retired, still listed).
    const seed = new Uint8Array(Buffer.from(deps.configuredSeedHex, "hex"));
    current = load(await activate(newSigningKeyRecord(secrets, seed, "token", null, clock.now()), { onlyIfNoneActive: false }));
  } else {
    current = loadAtBoot(
      stored ?? (await activate(newSigningKeyRecord(secrets, generateSeed(), "token", null, clock.now()), { onlyIfNoneActive: true })),
    );
  }

  const refresh = async () => {
    const latest = await repo.findActive("token", null);
    if (latest && latest.kid !== current.kid) current = load(latest);
  };
  const refreshMs = deps.refreshMs ?? TOKEN_KEY_REFRESH_MS;
  let running = false;
  const timer =
    refreshMs > 0
      ? setInterval(() => {
          if (running) return;
          running = true;
          refresh()
            .catch((e) => deps.onRefreshError?.(e))
            .finally(() => (running = false));
        }, refreshMs)
      : null;
  timer?.unref?.();

  return {
    active: () => current,
    list: () => repo.list("token", null),
    refresh,
    stop: () => {
      if (timer) clearInterval(timer);
    },
    async rotate(actor) {
      assertSystemWide(actor);
      const next = await activate(newSigningKeyRecord(secrets, generateSeed(), "token", null, clock.now()), {
        onlyIfNoneActive: false,
        effects: {
          audit: {
            actor,
            action: "signing_key.rotate",
            entityType: "signing_key",
            entityId: null,
            productId: null,
            changes: { previous_kid: current.kid },
            at: clock.now(),
          },
        },
      });
      current = load(next);
      return next;
    },
  };
}
