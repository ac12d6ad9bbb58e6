// Issuing, loading and administering licenses (a leaf: the composite admin view with activations and
// floating sessions is src/modules/license-admin). The plaintext key exists only in the issue response and,
// for admins, decrypted on demand from its AES-GCM copy; the database holds a lookup hash and the
// ciphertext (DECISIONS: Keys and secrets).
import type { Deps } from "../../deps";
import { changeLicense, createLicense } from "./change";
import { seal, openText } from "../../crypto/aead";
import { generateLicenseKey, isWellFormedLicenseKey, licenseKeyHint, licenseKeyLookupHash, normalizeLicenseKey } from "../../crypto/license-key";
import { asciiLower } from "../../shared/ascii";
import { checkListCursor, decodeListCursor, encodeListCursor, licenseListOrder, positionOf, searchBranches, type SearchBranch } from "./listing";
import { AppError, validationError } from "../../shared/errors";
import { DAY } from "../../shared/clock";
import { newId } from "../../shared/ids";
import { assertProductAccess, scopedProductFilter, type Actor } from "../../shared/actor";
import type { AuditEntry } from "../audit/repo";
import type { Effects, OutboxEvent } from "../outbox/effects";
import { licenseCreated, licensePlanChanged, licenseTransitioned, licenseUpdated } from "./events";
import { createdChanges, diffChanges } from "../plans/changes";
import { assertNotRevoked, transition, trialExpiryError, type LicenseAction } from "./domain";
import { licenseAuditView } from "./present";
import type { License, LicenseListFilter, LicensePatch, LicenseStatus } from "./repo";
import type { Plan } from "../plans/repo";

export interface IssueLicenseInput {
  productId: string;
  planId: string;
  email: string;
  validUntil?: Date | null;
  supportUntil?: Date | null;
  externalCustomerId?: string | null;
  externalWorkspaceId?: string | null;
  addonIds?: string[];
}

export function licenseKeyHash(deps: Pick<Deps, "secrets">, key: string): string {
  return licenseKeyLookupHash(deps.secrets.subkey("licenseKeyLookup"), key);
}

export function revealLicenseKey(deps: Pick<Deps, "secrets">, license: Pick<License, "id" | "keyEncrypted">): string {
  return openText(deps.secrets.subkey("licenseKeyEncryption"), license.keyEncrypted, license.id);
}

const audit = (deps: Deps, actor: Actor, action: string, license: Pick<License, "id" | "productId">, changes: AuditEntry["changes"]): Effects => ({
  audit: {
    actor,
    action,
    entityType: "license",
    entityId: license.id,
    productId: license.productId,
    changes,
    at: deps.clock.now(),
  },
});

/** Add-ons named at issue time must exist and belong to the license's product. */
async function productAddons(deps: Deps, productId: string, ids: readonly string[], field: string): Promise<string[]> {
  const unique = [...new Set(ids)];
  for (const id of unique) {
    const addon = await deps.repos.addons.findById(id);
    if (!addon || addon.productId !== productId) throw validationError({ [field]: `unknown add-on ${id} for this product` });
  }
  return unique;
}

/**
 * The one place a new license row is built (admin issue, Stripe purchase): a fresh key, its lookup
 * hash and sealed copy, and the plan's start status — trial plans start trialing and end after
 * trial_days unless an expiry is given; `status` overrides it (a purchase in a Stripe trial). A
 * trialing license without an expiry is refused (400).
 */
export function buildLicense(
  deps: Pick<Deps, "config" | "secrets">,
  plan: Pick<Plan, "id" | "licenseType" | "trialDays">,
  input: Omit<IssueLicenseInput, "planId" | "addonIds"> & { status?: LicenseStatus },
  now: Date,
): { license: License; key: string } {
  const trial = plan.licenseType === "trial";
  const id = newId();
  const key = generateLicenseKey(deps.config.licenseKeyPrefix);
  const status: LicenseStatus = input.status ?? (trial ? "trialing" : "active");
  const validUntil = input.validUntil !== undefined ? input.validUntil : trial ? new Date(now.getTime() + plan.trialDays * DAY) : null;
  const expiryError = trialExpiryError({ status, priorStatus: null }, validUntil);
  if (expiryError) throw validationError({ valid_until: expiryError });
  const license: License = {
    id,
    productId: input.productId,
    planId: plan.id,
    keyHash: licenseKeyHash(deps, key),
    keyEncrypted: seal(deps.secrets.subkey("licenseKeyEncryption"), key, id),
    keyHint: licenseKeyHint(key),
    email: input.email.trim(),
    status,
    priorStatus: null,
    validUntil,
    supportUntil: input.supportUntil ?? null,
    pastDueSince: null,
    externalCustomerId: input.externalCustomerId ?? null,
    externalWorkspaceId: input.externalWorkspaceId ?? null,
    createdAt: now,
    updatedAt: now,
  };
  return { license, key };
}

/** The effects of issuing `license` (audit row `license.issue`, event `license.created`). */
export function issueEffects(actor: Actor, license: License, addonIds: string[], at: Date): Effects {
  return {
    audit: {
      actor,
      action: "license.issue",
      entityType: "license",
      entityId: license.id,
      productId: license.productId,
      changes: createdChanges({ ...licenseAuditView(license), addon_ids: addonIds }),
      at,
    },
    events: [licenseCreated(license, at)],
  };
}

export async function issueLicense(deps: Deps, actor: Actor, input: IssueLicenseInput): Promise<{ license: License; key: string }> {
  assertProductAccess(actor, input.productId);
  const product = await deps.repos.products.findById(input.productId);
  if (!product) throw validationError({ product_id: "unknown product" });
  const plan = await deps.repos.plans.findById(input.planId);
  if (!plan || plan.productId !== product.id) throw validationError({ plan_id: "unknown plan for this product" });
  const addonIds = await productAddons(deps, product.id, input.addonIds ?? [], "addon_ids");
  const now = deps.clock.now();
  const { license, key } = buildLicense(deps, plan, { ...input, productId: product.id }, now);
  const effects = issueEffects(actor, license, addonIds, now);
  // Durable: the key goes to a caller that will not ask again (an integration that emails it, a
  // purchase). A power cut must not leave a key that was handed out but never stored.
  const created = await deps.db.transaction(({ repos }) => createLicense(repos, license, addonIds, effects), { durable: true });
  return { license: created, key };
}

/** Admin fetch: 404 NOT_FOUND when missing, 403 PRODUCT_SCOPE_MISMATCH for a bound key's other products. */
export async function getLicense(deps: Deps, actor: Actor, id: string): Promise<License> {
  const license = await deps.repos.licenses.findById(id);
  if (!license) throw new AppError("NOT_FOUND", { message: "License not found." });
  assertProductAccess(actor, license.productId);
  return license;
}

export interface ListLicensesInput {
  productId?: string;
  planId?: string;
  status?: LicenseStatus;
  search?: string;
  externalCustomerId?: string;
  externalWorkspaceId?: string;
  email?: string;
  emailPrefix?: string;
  emailDomain?: string;
  createdAfter?: Date;
  createdBefore?: Date;
  expiringBefore?: Date;
  cursor?: string;
  limit?: number;
}

export interface LicensePage {
  items: { license: License; planName: string }[];
  nextCursor: string | null;
}

/** `base` narrowed by one search branch (listing.ts: searchBranches). */
function withSearch(deps: Pick<Deps, "secrets">, base: LicenseListFilter, branch: SearchBranch, term: string): LicenseListFilter {
  switch (branch) {
    case "key":
      return { ...base, keyHash: licenseKeyHash(deps, normalizeLicenseKey(term)) };
    case "id":
      return { ...base, id: term.toLowerCase() };
    case "email":
      return { ...base, email: term };
    case "email_domain":
      return { ...base, emailDomain: term.slice(1) };
    case "key_hint":
      return { ...base, keyHint: term.toUpperCase() };
    case "external_customer":
      return { ...base, externalCustomerId: term };
    case "external_workspace":
      return { ...base, externalWorkspaceId: term };
    case "email_prefix":
      return { ...base, emailPrefix: term };
  }
}

export async function listLicenses(deps: Deps, actor: Actor, q: ListLicensesInput): Promise<LicensePage> {
  let productId = scopedProductFilter(actor, q.productId);
  if (q.planId) {
    // A bound key may not probe another product's plans through the filter either.
    const plan = await deps.repos.plans.findById(q.planId);
    if (plan) assertProductAccess(actor, plan.productId);
    // The plan's product narrows nothing more, but lets expiring_before read the product's range.
    if (plan && q.expiringBefore) productId ??= plan.productId;
  }
  const search = q.search?.trim() || undefined;
  // expiring_before reads soonest first over (product, status, valid_until): a filter that needs
  // another index (email, external ids, a search) would be checked row by row over all of it.
  if (q.expiringBefore) {
    const others = { search, email: q.email, email_prefix: q.emailPrefix, email_domain: q.emailDomain, external_customer_id: q.externalCustomerId, external_workspace_id: q.externalWorkspaceId };
    const named = Object.entries(others).filter(([, v]) => v !== undefined).map(([k]) => k);
    if (named.length) throw validationError({ expiring_before: `combines with product_id, plan_id, status and created_* only, not ${named.join(", ")}` });
  }
  if (q.emailPrefix !== undefined && search) throw validationError({ email_prefix: "cannot be combined with search" });
  const base: LicenseListFilter = {
    productId,
    planId: q.planId,
    status: q.status,
    externalCustomerId: q.externalCustomerId,
    externalWorkspaceId: q.externalWorkspaceId,
    email: q.email?.trim() || undefined,
    emailPrefix: q.emailPrefix?.trim() || undefined,
    emailDomain: q.emailDomain?.trim().replace(/^@/, "") || undefined,
    createdAfter: q.createdAfter,
    createdBefore: q.createdBefore,
    expiringBefore: q.expiringBefore,
    limit: q.limit ?? 50,
  };
  const decoded = q.cursor ? decodeListCursor(q.cursor) : null;
  // A search term is one index lookup, not an OR of several: its branches are tried in order and the
  // first with a match answers; the cursor names that branch, so the next pages stay in it.
  let branches: (SearchBranch | undefined)[] = [undefined];
  if (search) {
    // An exact license key is found through its lookup hash (no plaintext column); normalize first so
    // a pasted lower-case or space-padded key still matches.
    branches = searchBranches(search, isWellFormedLicenseKey(normalizeLicenseKey(search)));
    if (decoded) {
      if (!decoded.branch || !branches.includes(decoded.branch)) throw validationError({ cursor: "cursor of another search" });
      branches = [decoded.branch];
    }
  } else if (decoded?.branch) {
    throw validationError({ cursor: "cursor of another search" });
  }
  let filter = base;
  let page: { items: License[]; hasMore: boolean } = { items: [], hasMore: false };
  let branch: SearchBranch | undefined;
  for (const b of branches) {
    branch = b;
    filter = b && search ? withSearch(deps, base, b, search) : base;
    const cursor = decoded ? checkListCursor(decoded, filter) : undefined;
    page = await deps.repos.licenses.list({ ...filter, cursor });
    if (page.items.length) break;
  }
  // One read per distinct plan on the page (a page of 50 usually holds a few plans): the lookups
  // below start together, so the map holds the read itself, not its result.
  const planNames = new Map<string, Promise<string>>();
  const planName = (planId: string) => {
    let name = planNames.get(planId);
    if (!name) planNames.set(planId, (name = deps.repos.plans.findById(planId).then((p) => p?.name ?? "")));
    return name;
  };
  const last = page.items[page.items.length - 1];
  const order = licenseListOrder(filter);
  return {
    items: await Promise.all(page.items.map(async (license) => ({ license, planName: await planName(license.planId) }))),
    nextCursor: page.hasMore && last ? encodeListCursor(order, filter, branch, positionOf(order, last, asciiLower)) : null,
  };
}

/**
 * One atomic read-decide-write on a license with its audit row (changes = before/after of the
 * changed wire fields) and the events `events` derives from the row and the patch, all in the same
 * transaction. 404/403 are decided first, outside the transaction, on the loaded row.
 */
async function mutateLicense(
  deps: Deps,
  actor: Actor,
  id: string,
  action: string,
  decide: (current: License) => LicensePatch,
  events: (before: License, patch: LicensePatch, at: Date) => OutboxEvent[],
  opts: { clearActivations?: boolean } = {},
): Promise<License> {
  await getLicense(deps, actor, id);
  const at = deps.clock.now();
  const updated = await deps.db.transaction(({ repos }) =>
    changeLicense(
      repos,
      id,
      decide,
      at,
      (before, patch) => ({
        ...audit(deps, actor, action, before, diffChanges(licenseAuditView(before), licenseAuditView({ ...before, ...patch }))),
        events: events(before, patch, at),
      }),
      opts,
    ),
  );
  if (!updated) throw new AppError("NOT_FOUND", { message: "License not found." });
  return updated;
}

/** revoke | suspend | reinstate per the transition table in domain.ts; revoke drops activations. */
export async function applyLicenseAction(deps: Deps, actor: Actor, id: string, action: LicenseAction): Promise<License> {
  return await mutateLicense(
    deps,
    actor,
    id,
    `license.${action}`,
    (current) => transition(current, action),
    (before, patch, at) => [licenseTransitioned(action, before, patch, at)],
    { clearActivations: action === "revoke" },
  );
}

/** Moves a license to another plan of the same product; status and dates stay as they are. */
export async function changeLicensePlan(deps: Deps, actor: Actor, id: string, planId: string): Promise<License> {
  const license = await getLicense(deps, actor, id);
  const plan = await deps.repos.plans.findById(planId);
  if (!plan || plan.productId !== license.productId) throw validationError({ plan_id: "unknown plan for this license's product" });
  return await mutateLicense(deps, actor, id, "license.change_plan", (current) => {
    assertNotRevoked(current, "change the plan of");
    return { planId: plan.id };
  }, (before, patch, at) => (before.planId === patch.planId ? [] : [licensePlanChanged(before, patch, at)]));
}

/** Sets (or with null clears) the expiry. Reinstating an expired license is a separate action. */
export async function setLicenseValidUntil(deps: Deps, actor: Actor, id: string, validUntil: Date | null): Promise<License> {
  return await mutateLicense(deps, actor, id, "license.set_valid_until", (current) => {
    assertNotRevoked(current, "change the expiry of");
    const error = trialExpiryError(current, validUntil);
    if (error) throw validationError({ valid_until: error });
    return { validUntil };
  }, licenseUpdated);
}

/** Sets (or with null clears: unlimited) the end of the support/updates window. */
export async function setLicenseSupportUntil(deps: Deps, actor: Actor, id: string, supportUntil: Date | null): Promise<License> {
  return await mutateLicense(deps, actor, id, "license.set_support_until", (current) => {
    assertNotRevoked(current, "change the support window of");
    return { supportUntil };
  }, licenseUpdated);
}

/** Attaches an add-on of the license's product (400 otherwise); attaching twice is a no-op. */
export async function attachLicenseAddon(deps: Deps, actor: Actor, id: string, addonId: string): Promise<License> {
  const license = await getLicense(deps, actor, id);
  await productAddons(deps, license.productId, [addonId], "addon_id");
  // One unit of work: the license locked and judged, the add-on attached with its audit row (none
  // when it was attached already).
  const found = await deps.db.transaction(async ({ repos }) => {
    const current = await repos.licenses.lock(id);
    if (!current) return false;
    assertNotRevoked(current, "attach an add-on to");
    if (await repos.licenses.attachAddon(id, addonId, deps.clock.now())) {
      await repos.outbox.writeEffects(audit(deps, actor, "license.addon.attach", license, createdChanges({ addon_id: addonId })));
    }
    return true;
  });
  if (!found) throw new AppError("NOT_FOUND", { message: "License not found." });
  return (await deps.repos.licenses.findById(id))!;
}

export async function detachLicenseAddon(deps: Deps, actor: Actor, id: string, addonId: string): Promise<License> {
  const license = await getLicense(deps, actor, id);
  const result = await deps.db.transaction(async ({ repos }) => {
    const current = await repos.licenses.lock(id);
    if (!current) return null;
    assertNotRevoked(current, "detach an add-on from");
    const detached = await repos.licenses.detachAddon(id, addonId);
    if (detached) await repos.outbox.writeEffects(audit(deps, actor, "license.addon.detach", license, { before: { addon_id: addonId }, after: null }));
    return detached;
  });
  if (result === null) throw new AppError("NOT_FOUND", { message: "License not found." });
  if (result === false) throw new AppError("NOT_FOUND", { message: "The add-on is not attached to this license." });
  return (await deps.repos.licenses.findById(id))!;
}
