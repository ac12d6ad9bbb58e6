// The admin license list's shapes (pure): the order a filter reads in, its keyset cursor (which names
// the order and the filter it belongs to), and what a `search` term is looked up as. Every shape is a
// range read of one index (src/db/schema/licenses.ts), so a page costs the same at 1k and 10M rows.
import { createHash } from "node:crypto";
import { LICENSE_KEY_ALPHABET } from "../../crypto/license-key";
import { isStorableInstant } from "../../shared/clock";
import { validationError } from "../../shared/errors";
import type { LicenseListFilter } from "./repo";

/**
 * - `created`: newest first, (created_at, id) descending: the default.
 * - `email`: email_prefix: lower(email), then created_at, id, ascending (a range of the email index).
 * - `valid_until`: expiring_before: valid_until, then id, ascending (soonest first).
 */
export type LicenseListOrder = "created" | "email" | "valid_until";

export function licenseListOrder(f: Pick<LicenseListFilter, "expiringBefore" | "emailPrefix">): LicenseListOrder {
  if (f.expiringBefore) return "valid_until";
  if (f.emailPrefix !== undefined) return "email";
  return "created";
}

/**
 * The filter that drives the read: its index is the one range the statement reads (every other
 * condition is checked on the rows it yields, written so no planner can pick another index and sort;
 * see the repos' `residual`). Most selective first:
 * - unique lookups (`id`, `keyHash`): one row, no order;
 * - `valid_until` order: product+status, product, status, or none, each over (…, valid_until, id);
 * - `email` order: the email prefix's range of (lower(email), created_at, id);
 * - `created` order: key hint, email, email domain, external customer, external workspace,
 *   product+status, plan, product, status, or none, each over (…, created_at, id).
 */
export type LicenseListDriver =
  | "id"
  | "keyHash"
  | "keyHint"
  | "email"
  | "emailDomain"
  | "emailPrefix"
  | "externalCustomerId"
  | "externalWorkspaceId"
  | "productStatus"
  | "plan"
  | "product"
  | "status"
  | "all";

export function licenseListDriver(f: LicenseListFilter): LicenseListDriver {
  if (f.id !== undefined) return "id";
  if (f.keyHash !== undefined) return "keyHash";
  const order = licenseListOrder(f);
  if (order === "email") return "emailPrefix";
  if (order === "created") {
    if (f.keyHint !== undefined) return "keyHint";
    if (f.email !== undefined) return "email";
    if (f.emailDomain !== undefined) return "emailDomain";
    if (f.externalCustomerId !== undefined) return "externalCustomerId";
    if (f.externalWorkspaceId !== undefined) return "externalWorkspaceId";
  }
  if (f.productId && f.status) return "productStatus";
  if (f.planId && order === "created") return "plan";
  if (f.productId) return "product";
  if (f.status) return "status";
  return "all";
}

/** The sort key of the last row of a page: `t` is created_at (valid_until in that order), `e` the lower-cased email. */
export interface LicenseListPosition {
  t: number;
  id: string;
  e?: string;
}

/** How a `search` term is looked up; each is one index. */
export type SearchBranch = "key" | "id" | "email" | "email_domain" | "key_hint" | "external_customer" | "external_workspace" | "email_prefix";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HINT = new RegExp(`^[${LICENSE_KEY_ALPHABET}]{4}$`);

/**
 * The branches a search term may be, in the order they are tried: the first that has a match answers
 * (a term that is both an external customer id and an email prefix lists the customer's licenses).
 * A full key, a UUID and an address are unambiguous; a 4-symbol term over the key alphabet is a key
 * hint first (the last group's last 4 characters, shown as key_hint).
 */
export function searchBranches(term: string, isWellFormedKey: boolean): SearchBranch[] {
  if (isWellFormedKey) return ["key"];
  if (UUID.test(term)) return ["id"];
  if (term.startsWith("@")) return ["email_domain"];
  if (term.includes("@")) return ["email"];
  const fallback: SearchBranch[] = ["external_customer", "external_workspace", "email_prefix"];
  return HINT.test(term.toUpperCase()) ? ["key_hint", ...fallback] : fallback;
}

/**
 * Exclusive upper bound of the strings starting with `prefix` in byte order (SQLite's BINARY
 * collation, PostgreSQL's "C"): the prefix with its last code point incremented (UTF-8 keeps code
 * point order). Empty prefix → null (no bound).
 */
export function prefixUpperBound(prefix: string): string | null {
  const cps = [...prefix];
  while (cps.length) {
    const last = cps.pop()!.codePointAt(0)!;
    if (last >= 0x10ffff) continue; // nothing above it: bound on the shorter prefix
    let next = last + 1;
    if (next >= 0xd800 && next <= 0xdfff) next = 0xe000; // surrogates are not characters
    return cps.join("") + String.fromCodePoint(next);
  }
  return null;
}

/** The filter a cursor belongs to: every field but the cursor and the page size, as a short digest. */
export function filterFingerprint(f: LicenseListFilter): string {
  const { cursor: _c, limit: _l, ...rest } = f;
  const norm = Object.entries(rest)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => [k, v instanceof Date ? v.getTime() : v])
    .sort(([a], [b]) => String(a).localeCompare(String(b)));
  return createHash("sha256").update(JSON.stringify(norm)).digest("base64url").slice(0, 16);
}

interface WireCursor {
  /** order */
  o: LicenseListOrder;
  /** the search branch the first page chose, if any */
  b?: SearchBranch;
  /** filter fingerprint */
  f: string;
  t: number;
  id: string;
  e?: string;
}

export function encodeListCursor(order: LicenseListOrder, filter: LicenseListFilter, branch: SearchBranch | undefined, p: LicenseListPosition): string {
  const c: WireCursor = { o: order, ...(branch ? { b: branch } : {}), f: filterFingerprint(filter), t: p.t, id: p.id, ...(p.e !== undefined ? { e: p.e } : {}) };
  return Buffer.from(JSON.stringify(c), "utf8").toString("base64url");
}

const CURSOR_ID = /^[0-9A-Za-z_-]{1,64}$/;
const BRANCHES: readonly string[] = ["key", "id", "email", "email_domain", "key_hint", "external_customer", "external_workspace", "email_prefix"];
const invalid = (why = "invalid cursor") => validationError({ cursor: why });

/** Reads a cursor as issued (its order, branch and fingerprint still to be checked against the request). */
export function decodeListCursor(raw: string): { order: LicenseListOrder; branch?: SearchBranch; fingerprint: string | null; position: LicenseListPosition } {
  let c: Partial<WireCursor>;
  try {
    c = JSON.parse(Buffer.from(raw, "base64url").toString("utf8")) as Partial<WireCursor>;
  } catch {
    throw invalid();
  }
  if (!c || typeof c !== "object" || typeof c.t !== "number" || !Number.isInteger(c.t) || !isStorableInstant(c.t) || typeof c.id !== "string" || !CURSOR_ID.test(c.id)) {
    throw invalid();
  }
  // A cursor of the releases before orders existed ({t, id}): newest first, any filter.
  if (c.o === undefined && c.f === undefined && c.b === undefined && c.e === undefined) return { order: "created", fingerprint: null, position: { t: c.t, id: c.id } };
  if ((c.o !== "created" && c.o !== "email" && c.o !== "valid_until") || typeof c.f !== "string" || (c.b !== undefined && !BRANCHES.includes(c.b))) throw invalid();
  if ((c.o === "email") !== (typeof c.e === "string") || (c.e !== undefined && (c.e.length > 320 || c.e.includes("\u0000")))) throw invalid();
  return { order: c.o, branch: c.b, fingerprint: c.f, position: { t: c.t, id: c.id, ...(c.e !== undefined ? { e: c.e } : {}) } };
}

/** Refuses a cursor issued for another order or another filter (its position means nothing there). */
export function checkListCursor(decoded: ReturnType<typeof decodeListCursor>, filter: LicenseListFilter): LicenseListPosition {
  const order = licenseListOrder(filter);
  if (decoded.order !== order) throw invalid(`cursor of the ${decoded.order} order used with the ${order} order`);
  if (decoded.fingerprint !== null && decoded.fingerprint !== filterFingerprint(filter)) throw invalid("cursor of another filter");
  return decoded.position;
}

/** The position a page's last row leaves the next page at, in `order`. */
export function positionOf(order: LicenseListOrder, l: { id: string; createdAt: Date; validUntil: Date | null; email: string }, lowerEmail: (s: string) => string): LicenseListPosition {
  if (order === "valid_until") return { t: l.validUntil!.getTime(), id: l.id };
  if (order === "email") return { t: l.createdAt.getTime(), id: l.id, e: lowerEmail(l.email) };
  return { t: l.createdAt.getTime(), id: l.id };
}
