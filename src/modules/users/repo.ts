// People who sign in: portal customers, seat holders and admins (DECISIONS: Sessions and sign-in).
import type { Effects } from "../outbox/effects";
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
  /** Sets (or clears) the admin role; null when the user does not exist. */
  /**
   * With `keepAnAdmin`, taking the admin role away (demotion or removal) throws LAST_ADMIN unless
   * another user holds it, checked atomically with the change: two admins demoting each other at
   * once cannot leave none.
   */
  setRole(id: string, role: AdminRole | null, effects: Effects, opts?: { keepAnAdmin?: boolean }): Promise<User | null>;
  /** Deletes the user, its sessions (cascade) and unbinds its seats; false when missing. */
  remove(id: string, effects: Effects, opts?: { keepAnAdmin?: boolean }): Promise<boolean>;
  touchSignIn(id: string, at: Date): Promise<void>;
}
