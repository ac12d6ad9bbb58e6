// Activate, verify, deactivate (spec: License endpoints, Activation table, rules 1-2, design rule 4).
import { tokenNonce } from "../../crypto/nonce";
import type { Deps } from "../../deps";
import { keysetPage, type PageRequest } from "../../db/cursor";
import { AppError } from "../../shared/errors";
import { SECOND } from "../../shared/clock";
import type { Actor } from "../../shared/actor";
import { signToken, signTokenWhenFree } from "../../crypto/token";
import { getLicense } from "../licenses/service";
import { assertNotLockedOut, recordFailedLookup } from "../abuse/service";
import { featureValues, mergeGrants } from "../entitlements/domain";
import { licenseEntitlements } from "../entitlements/service";
import {
  assertStorableIdentifier,
  belongsToProduct,
  isUsableAccess,
  keyHashOf,
  licenseNotFound,
  requireUsableLicense,
  type PublicLicenseInput,
} from "../license-api/access";
import type { LicenseAccess } from "../license-api/repo";
import { lastSeenDue, onlineTokenClaims } from "./domain";
import type { ActivatedOutcome, Activation, IdentifierType } from "./repo";
import { activationCreated, activationDeleted } from "./events";
import type { Recorder } from "../idempotency/repo";
import type { FeatureGrant } from "../entitlements/repo";
import type { QuotaPeriod } from "../plans/repo";

/** A fresh online token's claims under the active key (its KeyObject is built once, never per request). */
function tokenFor(deps: Deps, access: LicenseAccess, identifier: string, features: Record<string, boolean | string>, now: Date) {
  const key = deps.tokenKeys.active();
  const claims = onlineTokenClaims({
    access,
    identifier,
    features,
    now,
    ttlSeconds: deps.config.tokenTtlSeconds,
    kid: key.kid,
    nonce: tokenNonce(),
  });
  return { signer: key.signer, claims };
}

/** Signs in place: for a synchronous transaction callback (an activation's stored idempotent outcome). */
function issueToken(deps: Deps, access: LicenseAccess, identifier: string, features: Record<string, boolean | string>, now: Date): string {
  const { signer, claims } = tokenFor(deps, access, identifier, features, now);
  return signToken(signer, claims);
}

/** Signs off the event loop while other requests wait on it, in place otherwise (crypto/offload.ts). */
async function issueTokenWhenFree(deps: Deps, access: LicenseAccess, identifier: string, features: Record<string, boolean | string>, now: Date): Promise<string> {
  const { signer, claims } = tokenFor(deps, access, identifier, features, now);
  return await signTokenWhenFree(signer, claims);
}

export interface ActivateInput extends PublicLicenseInput {
  identifier: string;
  identifierType: IdentifierType;
  label: string | null;
  /** Client address for the brute-force lockout. */
  ip: string;
}

export interface ActivateResult {
  status: "activated" | "already_activated";
  licenseId: string;
  token: string;
}

/**
 * `record` (Idempotency-Key) receives the result, token included, inside the activation's write
 * transaction: the activation and the stored outcome commit together.
 */
export async function activate(deps: Deps, input: ActivateInput, record?: Recorder<ActivateResult>): Promise<ActivateResult> {
  assertStorableIdentifier(input.identifier);
  const now = deps.clock.now();
  // One read: the license with its grants, the identifier's activation and the slots taken, which
  // the repository may decide on (PostgreSQL does, conditional on the license row being unchanged).
  // It goes out together with the lockout check (on PostgreSQL both statements share one round
  // trip), but its answer is looked at only after that check: a locked-out address learns nothing
  // about any key.
  const hash = keyHashOf(deps, input.licenseKey);
  const lookup = hash === null ? null : deps.repos.activations.lookup(hash, input.identifier);
  // Handled from the start: when the database goes away, the lookup can fail before the lockout
  // check has settled, and a rejection left without a handler for that long ends the process. Its
  // error still reaches `await lookup` below.
  lookup?.catch(() => {});
  await assertNotLockedOut(deps, input.ip, now);
  const seen = await lookup;
  if (!seen || !belongsToProduct(seen.access, input.productId)) {
    await recordFailedLookup(deps, input.ip, now);
    throw licenseNotFound();
  }
  const found = seen.access;
  // The token's features are known before the write transaction (the token is signed inside it when
  // an Idempotency-Key stores the outcome there, and a transaction callback cannot await).
  const features = verifyFeatures(seen.grants, found.plan.quotaPeriod);
  let result: ActivateResult | undefined;
  const finish = (o: ActivatedOutcome): ActivateResult =>
    (result = { status: o.kind, licenseId: o.access.license.id, token: issueToken(deps, o.access, input.identifier, features, now) });
  const outcome = await deps.repos.activations.activate(
    {
      licenseId: found.license.id,
      identifier: input.identifier,
      identifierType: input.identifierType,
      label: input.label,
      at: now,
      seen,
      // A repeat activation records last_seen as verify does: at most once per interval (a client
      // that activates at every start must not make every start a write).
      seenBefore: new Date(now.getTime() - deps.config.lastSeenIntervalSeconds * SECOND),
    },
    (current) => {
      if (!current) throw licenseNotFound(); // deleted between lookup and transaction
      // Spec: States, usability rule 1 — activate answers 403 for an unusable license. Only a caller
      // holding the real key can reach this branch; unknown keys got the 404 above.
      if (!isUsableAccess(current, now)) {
        throw new AppError("LICENSE_INACTIVE", { message: "This license is not active and cannot be activated." });
      }
    },
    record && ((o) => record(finish(o))),
    // Only a new activation is an event; a re-activation of the same identifier changes nothing an admin tracks.
    (o) => (o.kind === "activated" ? { events: [activationCreated(o.activation, o.access.license.productId, now)] } : {}),
  );
  if (outcome.kind === "limit") {
    throw new AppError("ACTIVATION_LIMIT", {
      message: "All activation slots of this license are in use. Deactivate a device first.",
      details: { max_activations: outcome.max },
    });
  }
  // Stored with an Idempotency-Key: signed inside the transaction. Otherwise signed here, where it may
  // leave the event loop.
  if (result) return result;
  return { status: outcome.kind, licenseId: outcome.access.license.id, token: await issueTokenWhenFree(deps, outcome.access, input.identifier, features, now) };
}

/**
 * The token's and response's feature values, a pure function of the grants and the plan's quota
 * period. A license without add-ons gets the plan's grant list as cached by the repository (the same
 * frozen array until the plan changes), so the merged, sorted values are computed once per plan
 * version and shared, frozen; a fresh list (add-ons) is computed each time.
 */
const featureMemo = new WeakMap<readonly FeatureGrant[], { period: QuotaPeriod; features: Readonly<Record<string, boolean | string>> }>();
function verifyFeatures(grants: readonly FeatureGrant[], period: QuotaPeriod): Record<string, boolean | string> {
  const memo = featureMemo.get(grants);
  if (memo && memo.period === period) return memo.features;
  const features = featureValues(mergeGrants(grants, period));
  if (Object.isFrozen(grants)) featureMemo.set(grants, { period, features: Object.freeze(features) });
  return features;
}

export interface VerifyInput extends PublicLicenseInput {
  identifier: string;
}

export interface VerifyResult {
  access: LicenseAccess;
  features: Record<string, boolean | string>;
  token: string;
}

/**
 * The hot path: prepared indexed reads of license, activation, plan and features, one Ed25519
 * signature, and a write only when last_seen_at is due.
 */
export async function verify(deps: Deps, input: VerifyInput): Promise<VerifyResult> {
  const now = deps.clock.now();
  const hash = keyHashOf(deps, input.licenseKey);
  const found = hash === null ? null : await deps.repos.activations.findForVerify(hash, input.identifier);
  if (!found && hash !== null) return await verifyOfflineActivated(deps, hash, input, now);
  // Spec design rule 4: missing key, malformed key, another product's key, an identifier never
  // activated, and every unusable state (suspended, revoked, expired, canceled, past grace) all get
  // the one identical 404, so verify cannot be used to probe which keys exist or what state they are in.
  if (!found || !belongsToProduct(found, input.productId) || !isUsableAccess(found, now)) {
    throw licenseNotFound();
  }
  const intervalMs = deps.config.lastSeenIntervalSeconds * SECOND;
  if (lastSeenDue(found.activation.lastSeenAt, now, intervalMs)) {
    await deps.repos.activations.touch(found.activation.id, now, new Date(now.getTime() - intervalMs));
  }
  // The lookup already carries the feature grants (one statement); no second read.
  const features = verifyFeatures(found.grants, found.plan.quotaPeriod);
  return { access: found, features, token: await issueTokenWhenFree(deps, found, input.identifier, features, now) };
}

/**
 * Verify of an identifier with no online activation (the miss path, off the hot path): a machine
 * with a live self-service offline activation (portal) verifies like an activated device while the
 * license is usable. Once an admin clears that activation, or the license is revoked, suspended,
 * expired or canceled, it gets the same 404 as everyone else (spec: Offline token issue, rule 6).
 * Admin-issued offline tokens record no activation, so their machines are never found here.
 */
async function verifyOfflineActivated(deps: Deps, hash: string, input: VerifyInput, now: Date): Promise<VerifyResult> {
  const access = await deps.repos.offlineTokens.findForVerify(hash, input.identifier);
  if (!access || !belongsToProduct(access, input.productId) || !isUsableAccess(access, now)) throw licenseNotFound();
  // Off the hot path: the offline lookup does not carry the grants, so read them.
  const features = featureValues(await licenseEntitlements(deps, access));
  return { access, features, token: await issueTokenWhenFree(deps, access, input.identifier, features, now) };
}

export async function deactivate(deps: Deps, input: VerifyInput): Promise<void> {
  const now = deps.clock.now();
  const access = await requireUsableLicense(deps, input, now);
  const removed = await deps.repos.activations.deactivate(access.license.id, input.identifier, (a) => ({
    events: [activationDeleted(a, access.license.productId, "deactivated", now)],
  }));
  // Same collapse as verify (spec: design rule 4): an unknown identifier is indistinguishable from an unknown key.
  if (!removed) throw licenseNotFound();
}

/** Activations per page by default, and at most (GET /admin/licenses/{id}/activations, POST /portal/activations). */
export const ACTIVATION_PAGE = { default: 50, max: 100 } as const;

/**
 * One page of a license's activations, oldest first, and the cursor of the next (null on the last).
 * A plan without max_activations puts no bound on them, so every view of them pages. `page` comes
 * from pageRequest(…, ACTIVATION_PAGE), checked before the license is looked up.
 */
export async function activationPage(deps: Pick<Deps, "repos">, licenseId: string, page: PageRequest): Promise<{ items: Activation[]; nextCursor: string | null }> {
  return keysetPage(await deps.repos.activations.listByLicense(licenseId, { limit: page.limit + 1, cursor: page.cursor }), page.limit);
}

/** Admin removal of one activation; frees its slot. Audited in the same transaction. */
export async function removeActivation(deps: Deps, actor: Actor, licenseId: string, activationId: string): Promise<Activation> {
  const license = await getLicense(deps, actor, licenseId); // 404, or 403 PRODUCT_SCOPE_MISMATCH for a bound key
  const now = deps.clock.now();
  const removed = await deps.repos.activations.remove(license.id, activationId, (a) => ({
    audit: {
      actor,
      action: "activation.remove",
      entityType: "license",
      entityId: license.id,
      productId: license.productId,
      changes: { activation_id: a.id, identifier: a.identifier, identifier_type: a.identifierType, label: a.label },
      at: now,
    },
    events: [activationDeleted(a, license.productId, "removed", now)],
  }));
  if (!removed) throw new AppError("NOT_FOUND", { message: "Activation not found." });
  return removed;
}
