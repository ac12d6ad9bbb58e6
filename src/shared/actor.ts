// Who is calling an admin operation. An API key and (later) an admin session both resolve to an Actor,
// so services and the guard never care which credential was used.
import { AppError } from "./errors";

/**
 * `read` is accepted by every GET admin route (the guard adds it), never by a write: read-only API
 * keys and the support/viewer admin roles carry it.
 */
export const SCOPES = ["admin", "licenses:write", "releases:write", "read"] as const;
export type Scope = (typeof SCOPES)[number];

export interface Actor {
  type: "api_key" | "session" | "system";
  id: string | null;
  scopes: ReadonlySet<Scope>;
  /** Product binding: a bound key may only touch this product's resources. null = system-wide. */
  productId: string | null;
  ip: string | null;
  requestId: string | null;
}

/** What a credential (API key, later a session) resolves to, before the request's address and id are added. */
export type Credential = Omit<Actor, "ip" | "requestId">;

export const SYSTEM_ACTOR: Actor = {
  type: "system",
  id: null,
  scopes: new Set<Scope>(["admin"]),
  productId: null,
  ip: null,
  requestId: null,
};

/** `admin` satisfies every requirement; otherwise one of the listed scopes must be held. */
/** The scopes a route accepts for `method`: its declared ones, plus `read` on GET. */
export function acceptedScopes(method: string, declared: readonly Scope[]): readonly Scope[] {
  return method === "GET" && !declared.includes("read") ? [...declared, "read"] : declared;
}

export function hasAnyScope(actor: Pick<Actor, "scopes">, accepted: readonly Scope[]): boolean {
  if (actor.scopes.has("admin")) return true;
  return accepted.some((s) => actor.scopes.has(s));
}

export function assertProductAccess(actor: Actor, productId: string): void {
  if (actor.productId !== null && actor.productId !== productId) throw new AppError("PRODUCT_SCOPE_MISMATCH");
}

/** System-wide resources (API keys, settings, audit, system jobs) are off limits to bound keys. */
export function assertSystemWide(actor: Actor): void {
  if (actor.productId !== null) {
    throw new AppError("PRODUCT_SCOPE_MISMATCH", {
      message: "A product-bound API key cannot access system-wide resources.",
    });
  }
}

/** List filter for a product: a bound key is confined to its product; asking for another is refused. */
export function scopedProductFilter(actor: Actor, requested: string | undefined): string | undefined {
  if (actor.productId === null) return requested;
  if (requested !== undefined && requested !== actor.productId) throw new AppError("PRODUCT_SCOPE_MISMATCH");
  return actor.productId;
}
