import type { LicenseListPosition } from "./listing";

export type LicenseStatus = "active" | "trialing" | "past_due" | "canceled" | "expired" | "suspended" | "revoked";

export interface License {
  id: string;
  productId: string;
  planId: string;
  keyHash: string;
  keyEncrypted: string;
  keyHint: string;
  email: string;
  status: LicenseStatus;
  priorStatus: LicenseStatus | null;
  validUntil: Date | null;
  supportUntil: Date | null;
  /** Start of the current past_due episode (kept while suspended from past_due); null otherwise. */
  pastDueSince: Date | null;
  externalCustomerId: string | null;
  externalWorkspaceId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export type LicensePatch = Partial<
  Pick<License, "planId" | "status" | "priorStatus" | "validUntil" | "supportUntil" | "pastDueSince" | "email" | "externalCustomerId" | "externalWorkspaceId">
>;

/**
 * One admin list read (see listing.ts for the orders and why each is one index range). Text matches
 * fold ASCII letters only, on both engines. The service resolves `search` into one of these fields.
 */
export interface LicenseListFilter {
  productId?: string;
  planId?: string;
  status?: LicenseStatus;
  /** Exact license id. */
  id?: string;
  /** Exact license key, by its lookup hash. */
  keyHash?: string;
  /** Exact key_hint (upper case). */
  keyHint?: string;
  externalCustomerId?: string;
  externalWorkspaceId?: string;
  /** Exact owner email, case-insensitive. */
  email?: string;
  /** Owner email starts with this, case-insensitive; reads in the `email` order. */
  emailPrefix?: string;
  /** The text after the email's first "@" is this, case-insensitive. */
  emailDomain?: string;
  /** created_at >= createdAfter. */
  createdAfter?: Date;
  /** created_at < createdBefore. */
  createdBefore?: Date;
  /** valid_until <= expiringBefore (not null); reads in the `valid_until` order. */
  expiringBefore?: Date;
  /** The previous page's last sort key, in this filter's order. */
  cursor?: LicenseListPosition;
  limit: number;
}

export interface LicenseRepo {
  /**
   * Writes a new license and its add-on links in the caller's unit of work (change.ts createLicense,
   * with the effects: the verbs run it durably). CONFLICT on a key hash collision or an
   * unknown product, plan or add-on.
   */
  create(license: License, addonIds: string[]): Promise<License>;
  findById(id: string): Promise<License | null>;
  /** Hot path (activate/verify): one prepared, indexed read. */
  findByKeyHash(keyHash: string): Promise<License | null>;
  list(filter: LicenseListFilter): Promise<{ items: License[]; hasMore: boolean }>;
  /**
   * The license row, locked until the enclosing transaction ends (a unit of work's repositories:
   * Deps.db.transaction); null when it does not exist. On PostgreSQL a row lock (SELECT … FOR
   * UPDATE): every writer of the license waits for that transaction. SQLite runs one writer at a
   * time, and the transaction already holds it: a plain read. Handlers that touch a license's
   * billing link or payments take it first, so they lock in one order and never deadlock.
   */
  lock(id: string): Promise<License | null>;
  /**
   * Writes a patch to a license this unit of work has locked (lock first; change.ts changeLicense
   * does both): an empty patch writes nothing, updated_at included. `clearActivations` also drops
   * its activations and floating sessions (revoke). Returns the row as it is now. Throws CONFLICT
   * when the patch names a plan that no longer exists.
   */
  update(id: string, patch: LicensePatch, at: Date, opts?: { clearActivations?: boolean }): Promise<License>;
  addonIds(licenseId: string): Promise<string[]>;
  /** Attaches an add-on; false when it was attached already (nothing written). CONFLICT when the add-on no longer exists. */
  attachAddon(licenseId: string, addonId: string, at: Date): Promise<boolean>;
  /** Detaches an add-on; false when it was not attached. */
  detachAddon(licenseId: string, addonId: string): Promise<boolean>;
}

