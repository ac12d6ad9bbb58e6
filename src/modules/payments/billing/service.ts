// How a license is billed through Stripe (docs/admin-api.md, "Billing"): its billing link and the
// payments it received, newest first.
import type { Deps } from "../../../deps";
import type { Actor } from "../../../shared/actor";
import { getLicense } from "../../licenses/service";
import type { BillingLink, Payment } from "../repo";

export interface LicenseBilling {
  licenseId: string;
  link: BillingLink | null;
  payments: Payment[];
}

/** 404 NOT_FOUND / 403 PRODUCT_SCOPE_MISMATCH as the other license routes. */
export async function getLicenseBilling(deps: Deps, actor: Actor, licenseId: string): Promise<LicenseBilling> {
  const license = await getLicense(deps, actor, licenseId);
  const [link, payments] = await Promise.all([deps.repos.payments.findLink(license.id), deps.repos.payments.listPayments(license.id)]);
  return { licenseId: license.id, link, payments };
}

