// Email normalization and the admin role rules (DECISIONS: Sessions and sign-in).
import type { Scope } from "../../shared/actor";
import { asciiLower } from "../../shared/ascii";
import { AppError } from "../../shared/errors";
import type { AdminRole, User } from "./repo";

/**
 * Users are keyed by the lower-cased address. Only ASCII letters are folded: the domain part is
 * case-insensitive everywhere, and no mail system we know treats the local part's ASCII case as
 * significant; non-ASCII characters are left as they are (no Unicode case folding surprises).
 */
export function normalizeEmail(email: string): string {
  return asciiLower(email.trim());
}

/**
 * What each admin role may do, as the scopes an API key would carry, so one guard checks both:
 * `admin` everything; `support` reads everything and acts on licenses (actions, seats,
 * activations) but not the catalog, keys, API keys or settings; `viewer` reads only.
 */
export const ROLE_SCOPES: Record<AdminRole, readonly Scope[]> = {
  admin: ["admin"],
  support: ["read", "licenses:write"],
  viewer: ["read"],
};

/** The role in force: an ADMIN_EMAILS address (config.adminEmails) is always `admin`; otherwise the stored role. */
export function effectiveRole(user: Pick<User, "email" | "role">, adminEmails: readonly string[]): AdminRole | null {
  return adminEmails.includes(user.email) ? "admin" : user.role;
}

export const lastAdmin = () => new AppError("LAST_ADMIN", { message: "This is the last admin; make someone else an admin first." });

/**
 * Taking the admin role from `user` (a demotion, or removal when `next` is undefined) must leave
 * another admin: `admins` are the ids holding the role, read under lock in the same unit of work, so
 * two admins demoting each other at once cannot leave none.
 */
export function assertAdminRemains(user: Pick<User, "id" | "role">, next: AdminRole | null | undefined, admins: readonly string[]): void {
  if (user.role === "admin" && next !== "admin" && !admins.some((id) => id !== user.id)) throw lastAdmin();
}
