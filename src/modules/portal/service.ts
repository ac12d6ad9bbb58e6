// Portal self-service (cookie session): the caller's licenses and their activations, with
// self-service deactivation — the lost-laptop case. Sits above seats, licenses and activations.
import type { Deps } from "../../deps";
import type { License } from "../licenses/repo";
import { revealLicenseKey } from "../licenses/service";
import type { Activation } from "../activations/repo";
import { ACTIVATION_PAGE, activationPage, removeActivation } from "../activations/service";
import { portalActor, portalLicense, type PortalCaller } from "../seats/service";
import type { PortalRole } from "../seats/domain";
import { decodeCursor, encodeCursor, pageRequest } from "../../db/cursor";
import { validationError } from "../../shared/errors";
import { asciiLower } from "../../shared/ascii";

export interface MyLicense {
  license: License;
  /** Decrypted: the owner and seat holders need it for the seat routes and in their apps. */
  key: string;
  role: PortalRole;
  productName: string;
  planName: string;
  maxSeats: number | null;
  usedSeats: number;
}

/** Where a page of GET /portal/licenses ends: in the owned part (o) or the seated part (s), after this row. */
interface MyLicensesCursor {
  part: "o" | "s";
  at: Date;
  id: string;
}

function encodeMyCursor(c: MyLicensesCursor): string {
  return `${c.part}.${encodeCursor({ t: c.at.getTime(), id: c.id })}`;
}

function decodeMyCursor(raw: string): MyLicensesCursor {
  const part = raw.slice(0, 2);
  if (part !== "o." && part !== "s.") throw validationError({ cursor: "invalid cursor" });
  const c = decodeCursor(raw.slice(2));
  return { part: part[0] as "o" | "s", at: new Date(c.t), id: c.id };
}

export interface MyLicensesPage {
  items: MyLicense[];
  nextCursor: string | null;
}

/**
 * GET /portal/licenses: licenses whose owner email is the caller's (case-insensitively), newest
 * first, then licenses the caller holds an accepted seat on, in acceptance order. A license both
 * owned and seated is listed once, as owner. In keyset pages of `limit`: each page reads at most
 * limit + 1 rows of each part (by licenses_email_lower_idx and seats_user_idx) and decrypts only its
 * own keys, so an owner of 10,000 licenses costs a page, not 10,000 decryptions. A page may hold
 * fewer items than `limit` (seats on licenses the caller also owns are skipped there).
 */
export async function myLicenses(deps: Deps, caller: PortalCaller, q: { cursor?: string; limit?: number } = {}): Promise<MyLicensesPage> {
  const limit = q.limit ?? 50;
  const cursor = q.cursor ? decodeMyCursor(q.cursor) : null;
  const rows: { license: License; role: PortalRole }[] = [];
  let next: MyLicensesCursor | null = null;
  if (!cursor || cursor.part === "o") {
    const owned = await deps.repos.seats.licensesOwnedBy(caller.user.email, { after: cursor ? { at: cursor.at, id: cursor.id } : undefined, limit: limit + 1 });
    for (const license of owned.slice(0, limit)) rows.push({ license, role: "owner" });
    if (owned.length > limit) {
      const last = rows[rows.length - 1]!.license;
      next = { part: "o", at: last.createdAt, id: last.id };
    }
  }
  const room = limit - rows.length;
  if (!next && room > 0) {
    const after = cursor?.part === "s" ? { at: cursor.at, id: cursor.id } : undefined;
    const seated = await deps.repos.seats.acceptedSeatsOf(caller.user.id, { after, limit: room + 1 });
    const email = asciiLower(caller.user.email);
    for (const seat of seated.slice(0, room)) {
      const license = await deps.repos.licenses.findById(seat.licenseId);
      // Owned licenses were listed in the owned part.
      if (!license || asciiLower(license.email) === email) continue;
      rows.push({ license, role: seat.role });
    }
    if (seated.length > room) {
      const last = seated[room - 1]!;
      next = { part: "s", at: last.acceptedAt!, id: last.id };
    }
  } else if (!next && room === 0) {
    // The owned part filled the page exactly: the seated part starts on the next one, if it has any.
    if ((await deps.repos.seats.acceptedSeatsOf(caller.user.id, { limit: 1 })).length > 0) {
      const last = rows[rows.length - 1]!.license;
      next = { part: "o", at: last.createdAt, id: last.id };
    }
  }
  const counts = await deps.repos.seats.countActive(rows.map((r) => r.license.id));
  const plans = new Map<string, { name: string; maxSeats: number | null }>();
  const products = new Map<string, string>();
  const out: MyLicense[] = [];
  for (const { license, role } of rows) {
    if (!plans.has(license.planId)) {
      const plan = await deps.repos.plans.findById(license.planId);
      plans.set(license.planId, { name: plan?.name ?? "", maxSeats: plan?.maxSeats ?? null });
    }
    if (!products.has(license.productId)) products.set(license.productId, (await deps.repos.products.findById(license.productId))?.name ?? "");
    const plan = plans.get(license.planId)!;
    out.push({
      license,
      key: revealLicenseKey(deps, license),
      role,
      productName: products.get(license.productId)!,
      planName: plan.name,
      maxSeats: plan.maxSeats,
      usedSeats: counts.get(license.id) ?? 0,
    });
  }
  return { items: out, nextCursor: next ? encodeMyCursor(next) : null };
}

/** POST /portal/activations: the owner and every accepted seat may see a license's activations. */
export async function myActivations(
  deps: Deps,
  caller: PortalCaller,
  licenseKey: string,
  page: { limit?: number; cursor?: string | null } = {},
): Promise<{ license: License; activations: Activation[]; nextCursor: string | null }> {
  const checked = pageRequest(page, ACTIVATION_PAGE);
  const { license } = await portalLicense(deps, caller, licenseKey, "view");
  const { items, nextCursor } = await activationPage(deps, license.id, checked);
  return { license, activations: items, nextCursor };
}

/**
 * POST /portal/activations/deactivate: frees the slot, for the owner and accepted admin seats (a
 * member, a pending invite or an unrelated user gets 404 LICENSE_NOT_FOUND). The same verb as the
 * admin removal, so the same effects: audit row `activation.remove` (naming the session's user) and
 * event `activation.deleted` with reason `removed`. An activation id not on this license: 404 NOT_FOUND.
 */
export async function deactivateMine(deps: Deps, caller: PortalCaller, input: { licenseKey: string; activationId: string }): Promise<Activation> {
  const { license } = await portalLicense(deps, caller, input.licenseKey, "manage");
  return await removeActivation(deps, portalActor(caller), license.id, input.activationId);
}
