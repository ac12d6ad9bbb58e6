import type { License } from "../licenses/repo";
import type { Plan } from "../plans/repo";

/** A license with its plan: what every public license call needs, read in one prepared join. */
export interface LicenseAccess {
  license: License;
  plan: Plan;
}

export interface LicenseAccessRepo {
  /** Hot path: one indexed read (key_hash is unique) joined with the plan. */
  findByKeyHash(keyHash: string): LicenseAccess | null;
  findById(licenseId: string): LicenseAccess | null;
}
