// Portal seat routes (cookie session; spec: Portal seats) and invite acceptance (public, token only;
// spec: Invite acceptance). The license_key in a portal body only names the license: the session
// cookie authenticates.
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { requestContext } from "../../http/request-context";
import { assertSameOrigin, type sessionAuth } from "../../http/session";
import type { SignedIn } from "../sessions/service";
import { acceptInvite, addPortalSeat, listPortalSeats, removePortalSeat, type PortalCaller } from "./service";
import { AcceptInviteBody, AcceptInviteResponse, AddSeatBody, AddSeatResponse, PortalSeatList, RemoveSeatBody, SeatSchema, SeatsBody } from "./model";
import { presentAccepted, presentAddedSeat, presentPortalSeats, presentSeat } from "./present";

export type SessionAuth = ReturnType<typeof sessionAuth>;

const portal = (summary: string, description: string) => ({ tags: ["Portal"], summary, description });

export function callerOf(signedIn: SignedIn, request: Request): PortalCaller {
  const ctx = requestContext(request);
  return { user: signedIn.user, ip: ctx.ip, requestId: ctx.requestId };
}

export function seatRoutes(deps: Deps, session: SessionAuth) {
  return new Elysia({ name: "keyward/seats" })
    .use(session)
    .post("/portal/seats", async ({ body, signedIn, request }) => ok(presentPortalSeats(await listPortalSeats(deps, callerOf(signedIn, request), body.license_key, { limit: body.limit, cursor: body.cursor }))), {
      signedIn: true,
      body: SeatsBody,
      response: { 200: Envelope(PortalSeatList), ...errors(401, 403, 404) },
      detail: portal(
        "Seats of a license you own or hold a seat on",
        "Pending and accepted seats. 401 when signed out; 404 LICENSE_NOT_FOUND when the license is missing or you are unrelated to it (a pending invite gives no standing until accepted).",
      ),
    })
    .post(
      "/portal/seats/add",
      async ({ body, signedIn, request }) =>
        ok(presentAddedSeat(await addPortalSeat(deps, callerOf(signedIn, request), { licenseKey: body.license_key, email: body.email, role: body.role ?? "member" }))),
      {
        signedIn: true,
        body: AddSeatBody,
        response: { 200: Envelope(AddSeatResponse), ...errors(401, 403, 404, 409) },
        detail: portal(
          "Invite a seat (or re-invite, restore)",
          "Owner or accepted admin seat only. New email: pending seat, invite emailed. Pending seat: token rotated, invite re-sent. Accepted seat: returned as is, no email. Removed seat: restored as pending with a new invite. 400 for the owner's own address or an invalid role; 404 LICENSE_NOT_FOUND when the license is missing or you may not change its seats; 409 SEAT_LIMIT when pending + accepted seats reach the plan's max_seats.",
        ),
      },
    )
    .post(
      "/portal/seats/remove",
      async ({ body, signedIn, request }) =>
        ok(presentSeat(await removePortalSeat(deps, callerOf(signedIn, request), { licenseKey: body.license_key, seatId: body.seat_id }))),
      {
        signedIn: true,
        body: RemoveSeatBody,
        response: { 200: Envelope(SeatSchema), ...errors(401, 403, 404) },
        detail: portal(
          "Remove a seat (soft)",
          "Owner or accepted admin seat only: sets removed_at and kills an outstanding invite. 404 LICENSE_NOT_FOUND when the license or the seat is missing or you may not change its seats. Removing a removed seat again answers 200 and changes nothing.",
        ),
      },
    );
}

export function inviteRoutes(deps: Deps) {
  return new Elysia({ name: "keyward/invites" }).post(
    "/invites/accept",
    async ({ body, request, set }) => {
      // The answer sets a session cookie: a form on another site must not be able to sign a browser in.
      assertSameOrigin(request, deps.config.baseUrl);
      const ctx = requestContext(request);
      const accepted = await acceptInvite(deps, { token: body.token, ip: ctx.ip, requestId: ctx.requestId, userAgent: request.headers.get("user-agent") });
      set.headers["set-cookie"] = accepted.setCookie;
      return ok(presentAccepted(accepted));
    },
    {
      body: AcceptInviteBody,
      response: { 200: Envelope(AcceptInviteResponse), ...errors(403, 404, 429) },
      detail: {
        tags: ["Portal"],
        summary: "Accept a seat invite",
        description:
          "Creates the user if none has the invited address, accepts the seat and signs the browser in (sets the `session` cookie). Every failure — malformed, unknown, expired or used token, removed seat, unusable license — is the same 404 SEAT_INVITE_INVALID; the token is consumed even when the license is unusable. 60 requests per minute per IP, then 429 RATE_LIMITED with Retry-After. 403 for a cross-site request.",
      },
    },
  );
}
