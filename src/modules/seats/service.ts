// Portal seats, invites and the admin seat view (spec: Seat, Seat state table, Portal seats, Invite
// acceptance; DECISIONS: max_seats null = unlimited, pending invites count).
import { randomBytes } from "node:crypto";
import type { Deps } from "../../deps";
import { keysetPage, pageRequest, type PageRequest } from "../../db/cursor";
import { AppError, validationError } from "../../shared/errors";
import type { Actor } from "../../shared/actor";
import { hmacSha256Hex } from "../../crypto/hash";
import { getLicense } from "../licenses/service";
import { isUsable } from "../licenses/domain";
import type { License } from "../licenses/repo";
import { keyHashOf, licenseNotFound } from "../license-api/access";
import { normalizeEmail } from "../users/domain";
import type { User } from "../users/repo";
import { signIn } from "../sessions/service";
import { sealedEmail } from "../email/outbox";
import type { Effects } from "../outbox/effects";
import { acceptUrl, INVITE_TOKEN_PATTERN, INVITE_TTL_MS, mayManageSeats, planSeatAdd, type PortalRole } from "./domain";
import { seatAccepted, seatInvited, seatRemoved } from "./events";
import type { Seat, SeatAddKind, SeatRole } from "./repo";

/** A signed-in portal user and where the request came from (for audit rows). */
export interface PortalCaller {
  user: User;
  ip: string | null;
  requestId: string | null;
}

/** Audit rows of portal changes name the session's user (actor type "session", id = user id). */
export function portalActor(caller: PortalCaller): Actor {
  return { type: "session", id: caller.user.id, scopes: new Set(), productId: null, ip: caller.ip, requestId: caller.requestId };
}

export interface PortalLicense {
  license: License;
  role: PortalRole;
}

/**
 * The license a portal request names, with the caller's standing on it. Spec (Portal seats, design
 * rule 4): a missing license, one the caller is unrelated to (a pending invite included), and — when
 * `manage` is asked — one the caller may not change (a member seat) all get the same 404
 * LICENSE_NOT_FOUND, so the portal cannot be used to probe which keys exist.
 */
export async function portalLicense(deps: Deps, caller: PortalCaller, licenseKey: string, need: "view" | "manage"): Promise<PortalLicense> {
  const hash = keyHashOf(deps, licenseKey);
  const license = hash === null ? null : await deps.repos.licenses.findByKeyHash(hash);
  if (!license) throw licenseNotFound();
  let role: PortalRole | null = null;
  if (normalizeEmail(license.email) === normalizeEmail(caller.user.email)) role = "owner";
  else role = (await deps.repos.seats.acceptedSeatOf(license.id, caller.user.id))?.role ?? null;
  if (role === null || (need === "manage" && !mayManageSeats(role))) throw licenseNotFound();
  return { license, role };
}

export interface SeatList {
  license: License;
  /** The caller's standing (portal); null in the admin view. */
  role: PortalRole | null;
  maxSeats: number | null;
  /** Pending and accepted seats, all of them (they count against max_seats). */
  usedSeats: number;
  /** One page of seats, in invite order, and the cursor of the next (null on the last). */
  seats: Seat[];
  nextCursor: string | null;
}

/** Seats per page by default, and at most (POST /portal/seats, GET /admin/licenses/{id}/seats). */
export const SEAT_PAGE = { default: 50, max: 100 } as const;

export interface SeatPageInput {
  limit?: number;
  cursor?: string | null;
}

async function seatList(deps: Deps, license: License, role: PortalRole | null, includeRemoved: boolean, asked: PageRequest): Promise<SeatList> {
  const [maxSeats, used, rows] = await Promise.all([
    maxSeatsOf(deps, license),
    deps.repos.seats.countActive([license.id]),
    deps.repos.seats.list(license.id, { includeRemoved, page: { limit: asked.limit + 1, cursor: asked.cursor } }),
  ]);
  const page = keysetPage(rows, asked.limit);
  return { license, role, maxSeats, usedSeats: used.get(license.id) ?? 0, seats: page.items, nextCursor: page.nextCursor };
}

async function maxSeatsOf(deps: Deps, license: License): Promise<number | null> {
  return (await deps.repos.plans.findById(license.planId))?.maxSeats ?? null;
}

/** POST /portal/seats: the pending and accepted seats of a license the caller owns or holds a seat on. */
export async function listPortalSeats(deps: Deps, caller: PortalCaller, licenseKey: string, page: SeatPageInput = {}): Promise<SeatList> {
  const asked = pageRequest(page, SEAT_PAGE);
  const { license, role } = await portalLicense(deps, caller, licenseKey, "view");
  return await seatList(deps, license, role, false, asked);
}

export interface AddSeatInput {
  licenseKey: string;
  email: string;
  role: SeatRole;
}

export interface AddSeatResult {
  kind: SeatAddKind;
  seat: Seat;
}

/** A fresh invite token (64 hex) and the keyed hash the seat row keeps (the token itself is never stored). */
export function newInviteToken(deps: Pick<Deps, "secrets">): { token: string; hash: string } {
  const token = randomBytes(32).toString("hex");
  return { token, hash: inviteTokenHash(deps, token) };
}

export function inviteTokenHash(deps: Pick<Deps, "secrets">, token: string): string {
  return hmacSha256Hex(deps.secrets.subkey("inviteTokenLookup"), token);
}

/**
 * POST /portal/seats/add, the seat state table in one atomic repository call: none → pending (invite
 * sent), pending → pending (token rotated, invite re-sent), accepted → accepted (returned, no email),
 * removed → pending (restored, new invite). New and restored seats need room under max_seats,
 * counting pending and accepted seats: 409 SEAT_LIMIT otherwise.
 */
export async function addPortalSeat(deps: Deps, caller: PortalCaller, input: AddSeatInput): Promise<AddSeatResult> {
  const { license } = await portalLicense(deps, caller, input.licenseKey, "manage");
  const email = normalizeEmail(input.email);
  // Spec: 400 for a self-invite — the owner is implicit and has no seat row.
  if (email === normalizeEmail(license.email)) throw validationError({ email: "the license owner cannot hold a seat on their own license" });
  const product = await deps.repos.products.findById(license.productId);
  const now = deps.clock.now();
  const { token, hash } = newInviteToken(deps);
  const expiresAt = new Date(now.getTime() + INVITE_TTL_MS);
  const actor = portalActor(caller);
  const invite = { role: input.role, tokenHash: hash, inviteExpiresAt: expiresAt, at: now };
  const effects = (kind: Exclude<SeatAddKind, "existing">, seat: Seat, current: License): Effects => ({
    audit: {
      actor,
      action: kind === "restored" ? "seat.restore" : kind === "reinvited" ? "seat.reinvite" : "seat.invite",
      entityType: "license",
      entityId: current.id,
      productId: current.productId,
      changes: { seat_id: seat.id, email: seat.email, role: seat.role },
      at: now,
    },
    events: [seatInvited(seat, current.productId, kind, now)],
    emails: [
      sealedEmail(deps.secrets, {
        template: "seat_invite",
        to: seat.email,
        at: now,
        data: { product_name: product?.name ?? "", role: seat.role, invited_by: caller.user.email, expires_at: expiresAt.toISOString() },
        secret: { accept_url: acceptUrl(deps.config.baseUrl, token) },
      }),
    ],
  });
  // One unit of work: the license held, the seat state table decided (domain.ts) on what it read,
  // and the seat written with its audit row, event and email, or nothing.
  const outcome = await deps.db.transaction(async ({ repos }) => {
    const current = await repos.seats.lockLicense(license.id);
    // Deleted meanwhile, or its owner changed to the invited address: the same answers as above.
    if (!current) throw licenseNotFound();
    if (normalizeEmail(current.license.email) === email) throw validationError({ email: "the license owner cannot hold a seat on their own license" });
    const existing = await repos.seats.findByEmail(license.id, email);
    const used = (await repos.seats.countActive([license.id])).get(license.id) ?? 0;
    const plan = planSeatAdd(existing, current.maxSeats, used);
    // Adding an accepted seat again changes nothing: no audit row, no event, no email.
    if (plan.kind === "limit" || plan.kind === "existing") return { plan, seat: existing };
    const seat = plan.kind === "invited" ? await repos.seats.insertInvite(license.id, email, invite) : await repos.seats.renewInvite(plan.seatId, invite);
    await repos.outbox.writeEffects(effects(plan.kind, seat, current.license));
    return { plan, seat };
  });
  if (outcome.plan.kind === "limit") {
    throw new AppError("SEAT_LIMIT", {
      message: "All seats of this license are taken (pending invites count). Remove a seat first.",
      details: { max_seats: outcome.plan.max, used_seats: outcome.plan.used },
    });
  }
  return { kind: outcome.plan.kind, seat: outcome.seat! };
}

/** Removal with its audit row and event; `by` says which API did it. */
async function removeSeat(deps: Deps, actor: Actor, license: License, seatId: string, by: "portal" | "admin", notFound: () => AppError): Promise<Seat> {
  const now = deps.clock.now();
  // One unit of work: the seat removed with its audit row and event. A seat removed before is
  // returned as it is, and nothing is recorded.
  const seat = await deps.db.transaction(async ({ repos }) => {
    const removed = await repos.seats.markRemoved(license.id, seatId, now);
    if (!removed) return await repos.seats.get(license.id, seatId);
    await repos.outbox.writeEffects({
      audit: {
        actor,
        action: "seat.remove",
        entityType: "license",
        entityId: license.id,
        productId: license.productId,
        changes: { seat_id: removed.id, email: removed.email, role: removed.role },
        at: now,
      },
      // The row as it was is gone; accepted_at says which state it left.
      events: [seatRemoved(removed, license.productId, removed.acceptedAt !== null ? "accepted" : "pending", by, now)],
    });
    return removed;
  });
  if (!seat) throw notFound();
  return seat;
}

/**
 * POST /portal/seats/remove: soft removal (removed_at set, invite token cleared) by the owner or an
 * accepted admin seat. A seat of another license is the same 404 as a missing license. Removing a
 * removed seat again answers 200 with the seat as it is and records nothing.
 */
export async function removePortalSeat(deps: Deps, caller: PortalCaller, input: { licenseKey: string; seatId: string }): Promise<Seat> {
  const { license } = await portalLicense(deps, caller, input.licenseKey, "manage");
  return await removeSeat(deps, portalActor(caller), license, input.seatId, "portal", licenseNotFound);
}

export interface AcceptInviteInput {
  token: string;
  ip: string | null;
  requestId: string | null;
  userAgent: string | null;
}

export interface AcceptedInvite {
  user: User;
  seat: Seat;
  license: License;
  productName: string;
  setCookie: string;
}

/**
 * Spec (Invite acceptance, design rule 4): every failure — malformed, unknown, expired, already used,
 * removed seat, unusable license — is the one 404 SEAT_INVITE_INVALID with the default message and
 * no details, so the answer says nothing about which tokens exist or what state their license is in.
 */
function inviteInvalid(): AppError {
  return new AppError("SEAT_INVITE_INVALID");
}

/**
 * POST /invites/accept. One transaction: the token is claimed (cleared: one use), the license checked
 * (usable: active/trialing/past_due and not past valid_until + grace_days, the rule of
 * licenses/domain.ts), the user created if none has the seat's address, the seat bound and accepted,
 * and a session opened. An expired token or an unusable license ends the transaction without error —
 * so the cleared token commits and the seat stays pending (spec: "token still consumed; owner must
 * re-invite") — and the 404 is thrown after it.
 */
export async function acceptInvite(deps: Deps, input: AcceptInviteInput): Promise<AcceptedInvite> {
  const token = input.token.trim().toLowerCase();
  if (!INVITE_TOKEN_PATTERN.test(token)) throw inviteInvalid();
  const hash = inviteTokenHash(deps, token);
  const now = deps.clock.now();
  const accepted = await deps.db.transaction(async (tx): Promise<AcceptedInvite | null> => {
    const { repos } = tx;
    const claimed = await repos.seats.claimInvite(hash, now);
    if (!claimed) return null;
    if (claimed.inviteExpiresAt === null || claimed.inviteExpiresAt.getTime() <= now.getTime()) return null;
    const license = await repos.licenses.findById(claimed.licenseId);
    const plan = license && (await repos.plans.findById(license.planId));
    if (!license || !plan || !isUsable(license, plan.graceDays, now)) return null;
    const { user, setCookie } = await signIn(tx, { email: claimed.email, method: "invite", ip: input.ip, userAgent: input.userAgent });
    const actor: Actor = { type: "session", id: user.id, scopes: new Set(), productId: null, ip: input.ip, requestId: input.requestId };
    const seat = await repos.seats.markAccepted(claimed.id, user.id, now);
    // The claim holds the seat in this transaction; a concurrent removal would have cleared the token first.
    if (!seat) throw inviteInvalid();
    await repos.outbox.writeEffects({
      audit: {
        actor,
        action: "seat.accept",
        entityType: "license",
        entityId: license.id,
        productId: license.productId,
        changes: { seat_id: seat.id, email: seat.email, role: seat.role, user_id: user.id },
        at: now,
      },
      events: [seatAccepted(seat, license.productId, now)],
    });
    const product = await repos.products.findById(license.productId);
    return { user, seat, license, productName: product?.name ?? "", setCookie };
  });
  if (!accepted) throw inviteInvalid();
  return accepted;
}

/** GET /admin/licenses/{id}/seats: every seat, removed ones included (404 / 403 PRODUCT_SCOPE_MISMATCH as other license routes). */
export async function adminListSeats(deps: Deps, actor: Actor, licenseId: string, page: SeatPageInput = {}): Promise<SeatList> {
  const asked = pageRequest(page, SEAT_PAGE);
  const license = await getLicense(deps, actor, licenseId);
  return await seatList(deps, license, null, true, asked);
}

/** POST /admin/licenses/{id}/seats/{seat_id}/remove. */
export async function adminRemoveSeat(deps: Deps, actor: Actor, licenseId: string, seatId: string): Promise<Seat> {
  const license = await getLicense(deps, actor, licenseId);
  return await removeSeat(deps, actor, license, seatId, "admin", () => new AppError("NOT_FOUND", { message: "Seat not found." }));
}
