// Admin management of users and their roles (DECISIONS: Sessions and sign-in). ADMIN_EMAILS
// addresses are admins by configuration: the API cannot demote or remove them. The last admin
// cannot be demoted or removed either, so the admin API never locks everyone out.
import type { Deps } from "../../deps";
import { assertSystemWide, type Actor } from "../../shared/actor";
import { AppError } from "../../shared/errors";
import { normalizeEmail } from "./domain";
import type { AdminRole, User, UserFilter } from "./repo";

export async function listUsers(deps: Deps, actor: Actor, filter: UserFilter) {
  assertSystemWide(actor);
  return deps.repos.users.list(filter);
}

export async function getUser(deps: Deps, actor: Actor, id: string): Promise<User> {
  assertSystemWide(actor);
  const user = await deps.repos.users.get(id);
  if (!user) throw new AppError("NOT_FOUND", { message: "User not found." });
  return user;
}

function assertNotConfigured(deps: Deps, user: Pick<User, "email">): void {
  if (deps.config.adminEmails.includes(user.email)) {
    throw new AppError("USER_MANAGED_BY_CONFIG", {
      message: "This address is an admin through ADMIN_EMAILS; change the configuration to change it.",
    });
  }
}

/**
 * Demoting or removing an admin must leave one (counting ADMIN_EMAILS addresses, which always are):
 * the repository checks it atomically with the change.
 */
const keepAnAdmin = (deps: Deps) => ({ keepAnAdmin: deps.config.adminEmails.length === 0 });

const audit = (actor: Actor, action: string, user: User, changes: Record<string, unknown> | null, at: Date) => ({
  actor,
  action,
  entityType: "user",
  entityId: user.id,
  productId: null,
  changes,
  at,
});

/** Sets or clears a user's admin role; takes effect on the user's next request. */
export async function setUserRole(deps: Deps, actor: Actor, id: string, role: AdminRole | null): Promise<User> {
  const user = await getUser(deps, actor, id);
  if (user.role === role) return user;
  assertNotConfigured(deps, user);
  const now = deps.clock.now();
  const updated = await deps.repos.users.setRole(
    id,
    role,
    { audit: audit(actor, "user.role_changed", user, { before: { role: user.role }, after: { role } }, now) },
    keepAnAdmin(deps),
  );
  if (!updated) throw new AppError("NOT_FOUND", { message: "User not found." });
  return updated;
}

/** Gives an address an admin role, creating its user (it signs in later with that address). */
export async function grantRole(deps: Deps, actor: Actor, input: { email: string; role: AdminRole }): Promise<User> {
  assertSystemWide(actor);
  const email = normalizeEmail(input.email);
  // Refused before the user row is created: a refusal leaves nothing behind.
  assertNotConfigured(deps, { email });
  const user = await deps.repos.users.ensure(email, deps.clock.now());
  return setUserRole(deps, actor, user.id, input.role);
}

/** Deletes a user: its sessions end at once; its seats stay, unbound, and bind again on its next invite. */
export async function removeUser(deps: Deps, actor: Actor, id: string): Promise<void> {
  const user = await getUser(deps, actor, id);
  assertNotConfigured(deps, user);
  const gone = await deps.repos.users.remove(
    id,
    { audit: audit(actor, "user.removed", user, { before: { email: user.email, role: user.role }, after: null }, deps.clock.now()) },
    keepAnAdmin(deps),
  );
  if (!gone) throw new AppError("NOT_FOUND", { message: "User not found." });
}

/** Ends every session of a user. */
export async function signOutUser(deps: Deps, actor: Actor, id: string): Promise<number> {
  const user = await getUser(deps, actor, id);
  return deps.repos.sessions.revokeAllForUser(user.id, {
    audit: audit(actor, "user.signed_out", user, null, deps.clock.now()),
  });
}
