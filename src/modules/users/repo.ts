// People who sign in: portal customers, seat holders and admins (DECISIONS: Sessions and sign-in).
import type { ADMIN_ROLES } from "../../db/schema/people";

export type AdminRole = (typeof ADMIN_ROLES)[number];

export interface User {
  id: string;
  /** Lower-cased (normalizeEmail). */
  email: string;
  /** The stored admin role; null = not an admin. ADMIN_EMAILS overrides it (see effectiveRole). */
  role: AdminRole | null;
  createdAt: Date;
  lastSignInAt: Date | null;
}

export interface UserFilter {
  /** "admins": any admin role stored; a role: exactly that one. */
  role?: AdminRole | "admins";
  /** Substring of the email, case-insensitive. */
  search?: string;
  cursor?: string;
  limit: number;
}

export interface UserRepo {
  /** The user with this normalized email, created (role null) when missing; race-safe (upsert). */
  ensure(email: string, at: Date): Promise<User>;
  get(id: string): Promise<User | null>;
  findByEmail(email: string): Promise<User | null>;
  /** Newest first, keyset-paginated. */
  list(filter: UserFilter): Promise<{ items: User[]; nextCursor: string | null }>;
  /**
   * The ids of the users holding the admin role, locked until the unit of work ends (PostgreSQL: FOR
   * UPDATE; SQLite: the unit's write lock), so concurrent demotions and removals of admins take
   * turns and each sees the others' outcome (users/domain.ts assertAdminRemains decides).
   */
  lockAdmins(): Promise<string[]>;
  /** The user, locked until the unit of work ends; null when it does not exist. */
  lock(id: string): Promise<User | null>;
  /** Sets (or clears) the admin role; the row after, or null when the user does not exist. */
  updateRole(id: string, role: AdminRole | null): Promise<User | null>;
  /** Deletes the user and its sessions (cascade); its seats stay, unbound. False when missing. */
  delete(id: string): Promise<boolean>;
  /** Records a sign-in time; best effort (skipped when another writer holds the row or the file). */
  touchSignIn(id: string, at: Date): Promise<void>;
}
