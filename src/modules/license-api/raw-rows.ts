// The license columns as the hand-written hot-path statements of both engines return them
// (bun:sqlite prepared statements, postgres.js tagged templates): snake_case, timestamps as epoch
// milliseconds (SQLite stores them so; PostgreSQL's statements select them as float8, the raw client
// returning timestamptz as text). No SQL here: both repositories map their rows with these.
import type { LicenseStatus } from "../licenses/repo";
import type { PublicLicense } from "./repo";

export interface RawLicenseRow {
  id: string;
  product_id: string;
  plan_id: string;
  status: LicenseStatus;
  valid_until: number | null;
  support_until: number | null;
  external_customer_id: string | null;
  external_workspace_id: string | null;
}

/** Epoch milliseconds (or null) as a Date. */
export const msDate = (v: number | null): Date | null => (v === null ? null : new Date(v));

export const rawLicense = (r: RawLicenseRow): PublicLicense => ({
  id: r.id,
  productId: r.product_id,
  planId: r.plan_id,
  status: r.status,
  validUntil: msDate(r.valid_until),
  supportUntil: msDate(r.support_until),
  externalCustomerId: r.external_customer_id,
  externalWorkspaceId: r.external_workspace_id,
});
