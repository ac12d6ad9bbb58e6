import type { RouteFixtureContext, RouteFixtures } from "./types";
import { makeLicense, makePlan } from "../factories";
import { newInviteToken } from "../../../src/modules/seats/service";

// Seats are license management: licenses:write (spec: API key rules), as the other license routes.
const WRITE = ["licenses:write"] as const;

/** A license of ctx.product with one pending seat, added straight through the repository. */
export async function fixtureSeat(ctx: RouteFixtureContext) {
  const { deps } = ctx.t;
  const plan = await makePlan(deps, ctx.product.id);
  const { license } = await makeLicense(deps, { productId: ctx.product.id, planId: plan.id });
  const now = deps.clock.now();
  const seat = await deps.repos.seats.insertInvite(license.id, "fixture-seat@example.com", { role: "member", tokenHash: newInviteToken(deps).hash, inviteExpiresAt: now, at: now });
  return { license, seat };
}

export default {
  "GET /api/v1/admin/licenses/:id/seats": {
    scopes: [...WRITE],
    build: async (ctx) => ({ params: { id: (await fixtureSeat(ctx)).license.id } }),
  },
  "POST /api/v1/admin/licenses/:id/seats/:seat_id/remove": {
    scopes: [...WRITE],
    build: async (ctx) => {
      const { license, seat } = await fixtureSeat(ctx);
      return { params: { id: license.id, seat_id: seat.id } };
    },
  },
} satisfies RouteFixtures;
