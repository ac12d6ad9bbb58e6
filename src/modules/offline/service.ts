// Offline tokens (spec: Offline token issue). Admin-issued tokens record no activation (rule 5) and
// are not revocable (rule 3): the audit row and the event are the only trace of them. A customer's
// self-service offline activation (portal, one per license, cleared only by an admin) is recorded in
// `offline_activations`; while it stands, that machine may also verify online (activations/service.ts).
import { tokenNonce } from "../../crypto/nonce";
import type { Deps, Repos } from "../../deps";
import { AppError } from "../../shared/errors";
import { newId } from "../../shared/ids";
import type { Actor } from "../../shared/actor";
import { signToken } from "../../crypto/token";
import { getLicense } from "../licenses/service";
import { licenseEntitlements } from "../entitlements/service";
import { featureValues } from "../entitlements/domain";
import { assertStorableIdentifier } from "../license-api/access";
import type { LicenseAccess } from "../license-api/repo";
import type { Effects } from "../outbox/effects";
import {
  licenseNotFound as notFound,
  offlineAccessOf,
  offlineExpiry,
  offlineTokenClaims,
  planOfflineIssue,
  planSelfServiceActivation,
  selfServiceOffered,
  selfServiceRefusal,
  type OfflineIssueRule,
} from "./domain";
import { offlineActivationCleared, offlineTokenIssued } from "./events";
import type { OfflineAccess, OfflineActivation } from "./repo";
import { portalActor, portalLicense, type PortalCaller } from "../seats/service";

export interface IssueOfflineTokenInput {
  /** The machine code, compared exactly (same limits as activation identifiers). */
  identifier: string;
  /** null = perpetual (`exp = 0`). */
  expiresAt: Date | null;
}

export interface OfflineToken {
  token: string;
  /** 16 hex: the token's `fpr`. */
  fingerprint: string;
  /** Unix seconds; 0 = perpetual. */
  exp: number;
}

const isoOfSeconds = (s: number) => (s === 0 ? null : new Date(s * 1000).toISOString());

/**
 * The signer a verb hands its unit of work (built before the unit: it takes the active key from
 * deps): it signs the token for the license as the unit read it and describes its side effects,
 * the audit row (`action`, the actor is who issued it) and the `offline_token.issued` event.
 */
function signOffline(
  deps: Deps,
  actor: Actor,
  input: { identifier: string; features: Record<string, boolean | string>; now: Date },
  source: "admin" | "portal",
  action: string,
): OfflineSigner {
  // The key is taken before the unit begins (deps is not for use inside one).
  const key = deps.tokenKeys.active();
  return (current, exp) => signWith(key, actor, current, { ...input, exp }, source, action);
}

function signWith(
  key: ReturnType<Deps["tokenKeys"]["active"]>,
  actor: Actor,
  current: LicenseAccess,
  input: { identifier: string; exp: number; features: Record<string, boolean | string>; now: Date },
  source: "admin" | "portal",
  action: string,
): { result: OfflineToken; effects: Effects } {
  const claims = offlineTokenClaims({
    access: current,
    identifier: input.identifier,
    features: input.features,
    now: input.now,
    exp: input.exp,
    kid: key.kid,
    nonce: tokenNonce(),
  });
  const token = signToken(key.signer, claims);
  const issued = { identifier: input.identifier, fingerprint: claims.fpr, exp: input.exp, kid: key.kid };
  return {
    result: { token, fingerprint: claims.fpr, exp: input.exp },
    effects: {
      audit: {
        actor,
        action,
        entityType: "license",
        entityId: current.license.id,
        productId: current.license.productId,
        // The token itself is kept nowhere.
        changes: {
          before: null,
          after: {
            identifier: input.identifier,
            fingerprint: claims.fpr,
            perpetual: input.exp === 0,
            expires_at: isoOfSeconds(input.exp),
            support_until: isoOfSeconds(claims.sup),
            kid: key.kid,
          },
        },
        at: input.now,
      },
      events: [offlineTokenIssued(current, issued, actor, source, input.now)],
    },
  };
}

async function tokenFeatures(deps: Deps, access: LicenseAccess): Promise<Record<string, boolean | string>> {
  // Read before the unit of work (what it reads goes through deps, which a unit may not use), as activate does.
  return featureValues(await licenseEntitlements(deps, access));
}

/** Signs a token for the license as the unit read it, with expiry `exp`: the result and its effects. */
export type OfflineSigner = (current: OfflineAccess, exp: number) => { result: OfflineToken; effects: Effects };

type UnitRepos = Pick<Repos, "licenses" | "plans" | "offlineTokens" | "outbox">;

/**
 * The license and its plan with the plan's portal_offline_activation setting, through `repos`;
 * `lock`: the license row's lock (LicenseRepo.lock), in a unit of work. Null when the license is unknown.
 */
export async function readOfflineAccess(repos: Pick<Repos, "licenses" | "plans">, licenseId: string, opts: { lock?: boolean } = {}): Promise<OfflineAccess | null> {
  const license = opts.lock ? await repos.licenses.lock(licenseId) : await repos.licenses.findById(licenseId);
  if (!license) return null;
  const plan = await repos.plans.findById(license.planId);
  return plan ? offlineAccessOf(license, plan) : null;
}

/**
 * A token issue's unit of work (the admin's, the portal's license file): the license row locked (a
 * suspend or revoke racing the issue waits for it or is seen by it) and read with its plan, the rule
 * decides (domain.ts planOfflineIssue: throws its refusal), `sign` signs, its effects are written.
 */
export async function issueOffline(repos: UnitRepos, licenseId: string, rule: OfflineIssueRule, now: Date, sign: OfflineSigner): Promise<OfflineToken> {
  const plan = planOfflineIssue(await readOfflineAccess(repos, licenseId, { lock: true }), rule, now);
  if (plan.kind === "refuse") throw plan.error;
  const { result, effects } = sign(plan.access, plan.exp);
  await repos.outbox.writeEffects(effects);
  return result;
}

export type SelfServiceOutcome = { kind: "created"; activation: OfflineActivation; result: OfflineToken } | { kind: "taken"; existing: OfflineActivation };

/**
 * A self-service activation's unit of work: the license row locked (two requests for one license,
 * or an admin clear, serialise on it) and read with its plan and live activation; the rule decides
 * (domain.ts planSelfServiceActivation: throws its refusal, or `taken` writes nothing); otherwise
 * `sign` signs and the activation row (`row`: its id, machine and maker) and the effects are written.
 */
export async function activateOffline(
  repos: UnitRepos,
  licenseId: string,
  row: Pick<OfflineActivation, "id" | "identifier" | "createdBy">,
  now: Date,
  sign: OfflineSigner,
): Promise<SelfServiceOutcome> {
  const current = await readOfflineAccess(repos, licenseId, { lock: true });
  const live = current ? await repos.offlineTokens.findLive(licenseId) : null;
  const plan = planSelfServiceActivation(current, live, now);
  if (plan.kind === "refuse") throw plan.error;
  if (plan.kind === "taken") return plan;
  const { result, effects } = sign(plan.access, plan.exp);
  const activation: OfflineActivation = {
    ...row,
    licenseId,
    fingerprint: result.fingerprint,
    expiresAt: plan.exp === 0 ? null : new Date(plan.exp * 1000),
    createdAt: now,
    clearedAt: null,
    clearedBy: null,
  };
  await repos.offlineTokens.insert(activation);
  await repos.outbox.writeEffects(effects);
  return { kind: "created", activation, result };
}

/** An admin clear's unit of work: the conditional clear and, when it cleared a row, its effects. */
export async function clearOffline(
  repos: Pick<Repos, "offlineTokens" | "outbox">,
  licenseId: string,
  activationId: string,
  at: Date,
  clearedBy: string | null,
  effects: (cleared: OfflineActivation) => Effects,
): Promise<OfflineActivation | null> {
  const cleared = await repos.offlineTokens.clear(licenseId, activationId, at, clearedBy);
  if (cleared) await repos.outbox.writeEffects(effects(cleared));
  return cleared;
}

/** POST /admin/licenses/{id}/offline-token. */
export async function issueOfflineToken(deps: Deps, actor: Actor, licenseId: string, input: IssueOfflineTokenInput): Promise<OfflineToken> {
  await getLicense(deps, actor, licenseId); // 404, or 403 PRODUCT_SCOPE_MISMATCH for a bound key
  const now = deps.clock.now();
  const exp = offlineExpiry(input.expiresAt, now);
  const access = await deps.repos.licenseAccess.findById(licenseId);
  if (!access) throw notFound();
  const features = await tokenFeatures(deps, access);
  const signer = signOffline(deps, actor, { identifier: input.identifier, features, now }, "admin", "license.offline_token.issue");
  return await deps.db.transaction(({ repos }) => issueOffline(repos, licenseId, { kind: "admin", exp }, now, signer));
}

/** What the portal shows for a license: whether the option is offered, and the live activation. */
export interface SelfServiceOfflineView {
  /**
   * False when the plan does not offer it (its portal_offline_activation setting is off, or it is
   * floating): the portal hides the option.
   */
  offered: boolean;
  /** True when a new self-service activation would be accepted now (offered, usable, none live). */
  available: boolean;
  activation: OfflineActivation | null;
}

/**
 * The portal's view of a license's self-service offline activation. The caller (the portal) has
 * already established that its user may act on `licenseId`.
 */
export async function selfServiceOfflineView(deps: Deps, licenseId: string): Promise<SelfServiceOfflineView> {
  const access = await readOfflineAccess(deps.repos, licenseId);
  if (!access) throw notFound();
  const offered = selfServiceOffered(access.plan);
  const activation = offered ? await deps.repos.offlineTokens.findLive(licenseId) : null;
  return { offered, available: offered && activation === null && selfServiceRefusal(access, deps.clock.now()) === null, activation };
}

export interface SelfServiceOfflineResult extends OfflineToken {
  activation: OfflineActivation;
}

/**
 * A customer's self-service offline activation (portal): one live per license. Refused with
 * 409 INVALID_TRANSITION for a license that is not active or trialing, 403 FORBIDDEN for a plan
 * that does not offer it (portal_offline_activation off, or floating), and 409 CONFLICT
 * (details.offline_activation_id) while one stands: only an admin clears it. The token's expiry
 * is the license's valid_until + grace_days, or perpetual. `actor` is the portal user (type
 * `session`, id = the user id); the caller has checked access.
 */
export async function activateOfflineSelfService(
  deps: Deps,
  actor: Actor,
  licenseId: string,
  identifier: string,
): Promise<SelfServiceOfflineResult> {
  const now = deps.clock.now();
  const access = await deps.repos.licenseAccess.findById(licenseId);
  if (!access) throw notFound();
  const features = await tokenFeatures(deps, access);
  const signer = signOffline(deps, actor, { identifier, features, now }, "portal", "license.offline_activation.create");
  const row = { id: newId(), identifier, createdBy: actor.id };
  const outcome = await deps.db.transaction(({ repos }) => activateOffline(repos, licenseId, row, now, signer));
  if (outcome.kind === "taken") {
    throw new AppError("CONFLICT", {
      message: "This license already has its offline activation. Ask the vendor to clear it first.",
      details: { offline_activation_id: outcome.existing.id },
    });
  }
  return { ...outcome.result, activation: outcome.activation };
}

/** Admin: the license's offline activations, cleared ones included, newest first. */
export async function listOfflineActivations(deps: Deps, actor: Actor, licenseId: string): Promise<OfflineActivation[]> {
  const license = await getLicense(deps, actor, licenseId);
  return await deps.repos.offlineTokens.listByLicense(license.id);
}

/**
 * Admin: clears the live self-service offline activation, so that machine's online verify answers
 * 404 and the license may make a new one. Audited; `offline_activation.cleared` event.
 */
export async function clearOfflineActivation(deps: Deps, actor: Actor, licenseId: string, activationId: string): Promise<OfflineActivation> {
  const license = await getLicense(deps, actor, licenseId);
  const now = deps.clock.now();
  const effects = (a: OfflineActivation): Effects => ({
    audit: {
      actor,
      action: "license.offline_activation.clear",
      entityType: "license",
      entityId: license.id,
      productId: license.productId,
      changes: { before: { offline_activation_id: a.id, identifier: a.identifier, fingerprint: a.fingerprint }, after: null },
      at: now,
    },
    events: [offlineActivationCleared(a, license.productId, actor, now)],
  });
  const cleared = await deps.db.transaction(({ repos }) => clearOffline(repos, license.id, activationId, now, actor.id, effects));
  if (!cleared) throw new AppError("NOT_FOUND", { message: "No live offline activation with this id on this license." });
  return cleared;
}

// ---- Portal (cookie session). The license_key in a body only names the license; portalLicense
// answers 404 LICENSE_NOT_FOUND to anyone without standing on it.

export interface PortalOfflineView extends SelfServiceOfflineView {
  licenseId: string;
}

/** POST /portal/offline-activation: the owner and every accepted seat see the option and its activation. */
export async function portalOfflineView(deps: Deps, caller: PortalCaller, licenseKey: string): Promise<PortalOfflineView> {
  const { license } = await portalLicense(deps, caller, licenseKey, "view");
  return { licenseId: license.id, ...(await selfServiceOfflineView(deps, license.id)) };
}

/** POST /portal/offline-activation/activate: the owner and accepted admin seats (others: 404). */
export async function portalOfflineActivate(deps: Deps, caller: PortalCaller, licenseKey: string, identifier: string): Promise<SelfServiceOfflineResult> {
  assertStorableIdentifier(identifier);
  const { license } = await portalLicense(deps, caller, licenseKey, "manage");
  return await activateOfflineSelfService(deps, portalActor(caller), license.id, identifier);
}

export interface LicenseFile {
  filename: string;
  /** The file's text: the token on one line. */
  content: string;
}

/**
 * POST /portal/offline-activation/license-file: a freshly signed token for the license's live
 * self-service offline activation (same machine, the license's current support window and expiry),
 * as a file. For the owner and every accepted seat: the machine is already bound, so a new copy
 * grants nothing new. 404 NOT_FOUND when there is no live activation; the license rules as for
 * the activation itself. Each download is audited and recorded as offline_token.issued (portal).
 */
export async function portalOfflineLicenseFile(deps: Deps, caller: PortalCaller, licenseKey: string): Promise<LicenseFile> {
  const { license } = await portalLicense(deps, caller, licenseKey, "view");
  const live = await deps.repos.offlineTokens.findLive(license.id);
  if (!live) throw new AppError("NOT_FOUND", { message: "This license has no offline activation." });
  const now = deps.clock.now();
  const access = await deps.repos.licenseAccess.findById(license.id);
  if (!access) throw notFound();
  const features = await tokenFeatures(deps, access);
  const signer = signOffline(deps, portalActor(caller), { identifier: live.identifier, features, now }, "portal", "license.offline_activation.download");
  const signed = await deps.db.transaction(({ repos }) => issueOffline(repos, license.id, { kind: "self-service" }, now, signer));
  return { filename: `license-${signed.fingerprint}.lic`, content: `${signed.token}\n` };
}
