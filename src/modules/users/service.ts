// Admin management of users and their roles (DECISIONS: Sessions and sign-in). ADMIN_EMAILS
// addresses are admins by configuration: the API cannot demote or remove them. The last admin
// cannot be demoted or removed either, so the admin API never locks everyone out.
import type { Deps, Repos } from "../../deps";
import { assertSystemWide, type Actor } from "../../shared/actor";
import { AppError } from "../../shared/errors";
import type { Effects } from "../outbox/effects";
import { endAllSessions } from "../sessions/service";
import { assertAdminRemains, normalizeEmail } from "./domain";
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
 * checked in the change's unit of work, against the admins it locked (domain.ts assertAdminRemains).
 */
const keepAnAdmin = (deps: Pick<Deps, "config">) => deps.config.adminEmails.length === 0;

const audit = (actor: Actor, action: string, user: User, changes: Record<string, unknown> | null, at: Date) => ({
  actor,
  action,
  entityType: "user",
  entityId: user.id,
  productId: null,
  changes,
  at,
});

/**
 * A role change (`role`) or a removal (`role` undefined) as one unit of work: the admins locked
 * first when one must remain, then the user; the rule decides; the row and its audit are written.
 * The user as it was and after, or null when it does not exist. Exported for the contract test that
 * races it from several nodes.
 */
export async function applyUserChange(
  repos: Pick<Repos, "users" | "outbox">,
  id: string,
  role: AdminRole | null | undefined,
  opts: { keepAnAdmin: boolean; effects: (before: User) => Effects },
): Promise<{ before: User; after: User | null } | null> {
  const admins = opts.keepAnAdmin ? await repos.users.lockAdmins() : [];
  const before = await repos.users.lock(id);
  if (!before) return null;
  if (role !== undefined && before.role === role) return { before, after: before };
  if (opts.keepAnAdmin) assertAdminRemains(before, role, admins);
  const after = role === undefined ? (await repos.users.delete(id), null) : await repos.users.updateRole(id, role);
  await repos.outbox.writeEffects(opts.effects(before));
  return { before, after };
}

/** Sets or clears a user's admin role; takes effect on the user's next request. */
export async function setUserRole(deps: Deps, actor: Actor, id: string, role: AdminRole | null): Promise<User> {
  const user = await getUser(deps, actor, id);
  if (user.role === role) return user;
  assertNotConfigured(deps, user);
  const now = deps.clock.now();
  const changed = await deps.db.transaction(({ repos }) =>
    applyUserChange(repos, id, role, {
      keepAnAdmin: keepAnAdmin(deps),
      effects: (before) => ({ audit: audit(actor, "user.role_changed", before, { before: { role: before.role }, after: { role } }, now) }),
    }),
  );
  if (!changed?.after) throw new AppError("NOT_FOUND", { message: "User not found." });
  return changed.after;
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
  const now = deps.clock.now();
  const gone = await deps.db.transaction(({ repos }) =>
    applyUserChange(repos, id, undefined, {
      keepAnAdmin: keepAnAdmin(deps),
      effects: (before) => ({ audit: audit(actor, "user.removed", before, { before: { email: before.email, role: before.role }, after: null }, now) }),
    }),
  );
  if (!gone) throw new AppError("NOT_FOUND", { message: "User not found." });
}

/** Ends every session of a user. */
export async function signOutUser(deps: Deps, actor: Actor, id: string): Promise<number> {
  const user = await getUser(deps, actor, id);
  return endAllSessions(deps, user.id, {
    audit: audit(actor, "user.signed_out", user, null, deps.clock.now()),
  });
}
