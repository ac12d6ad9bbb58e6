// Issuing and loading licenses. The plaintext key exists only in the issue response and, for admins,
// decrypted on demand from its AES-GCM copy; the database holds a lookup hash and the ciphertext.
import type { Deps } from "../../deps";
import { seal, openText } from "../../crypto/aead";
import { generateLicenseKey, licenseKeyHint, licenseKeyLookupHash } from "../../crypto/license-key";
import { AppError } from "../../shared/errors";
import { DAY } from "../../shared/clock";
import { newId } from "../../shared/ids";
import { assertProductAccess, type Actor } from "../../shared/actor";
import type { License } from "./repo";

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

export function issueLicense(deps: Deps, actor: Actor, input: IssueLicenseInput): { license: License; key: string } {
  assertProductAccess(actor, input.productId);
  const product = deps.repos.products.findById(input.productId);
  if (!product) throw new AppError("VALIDATION_ERROR", { details: { fields: { product_id: "unknown product" } } });
  const plan = deps.repos.plans.findById(input.planId);
  if (!plan || plan.productId !== product.id) {
    throw new AppError("VALIDATION_ERROR", { details: { fields: { plan_id: "unknown plan for this product" } } });
  }
  const now = deps.clock.now();
  const trial = plan.licenseType === "trial";
  const id = newId();
  const key = generateLicenseKey(deps.config.licenseKeyPrefix);
  const license: License = {
    id,
    productId: product.id,
    planId: plan.id,
    keyHash: licenseKeyHash(deps, key),
    keyEncrypted: seal(deps.secrets.subkey("licenseKeyEncryption"), key, id),
    keyHint: licenseKeyHint(key),
    email: input.email.trim(),
    // Trial plans start trialing and end after trial_days unless an explicit expiry is given.
    status: trial ? "trialing" : "active",
    priorStatus: null,
    validUntil: input.validUntil !== undefined ? input.validUntil : trial ? new Date(now.getTime() + plan.trialDays * DAY) : null,
    supportUntil: input.supportUntil ?? null,
    externalCustomerId: input.externalCustomerId ?? null,
    externalWorkspaceId: input.externalWorkspaceId ?? null,
    createdAt: now,
    updatedAt: now,
  };
  const created = deps.repos.licenses.create(license, input.addonIds ?? [], {
    actor,
    action: "license.issue",
    entityType: "license",
    entityId: id,
    productId: product.id,
    changes: {
      plan_id: plan.id,
      email: license.email,
      status: license.status,
      valid_until: license.validUntil?.toISOString() ?? null,
      support_until: license.supportUntil?.toISOString() ?? null,
      external_customer_id: license.externalCustomerId,
      external_workspace_id: license.externalWorkspaceId,
      addon_ids: input.addonIds ?? [],
    },
    at: now,
  });
  return { license: created, key };
}

/** Admin fetch: 404 NOT_FOUND when missing, 403 PRODUCT_SCOPE_MISMATCH for a bound key's other products. */
export function getLicense(deps: Deps, actor: Actor, id: string): License {
  const license = deps.repos.licenses.findById(id);
  if (!license) throw new AppError("NOT_FOUND", { message: "License not found." });
  assertProductAccess(actor, license.productId);
  return license;
}
