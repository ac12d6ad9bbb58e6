import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { Uuid } from "../license-api/model";
import { adminListSeats, adminRemoveSeat } from "./service";
import { AdminSeatList, AdminSeatParams, AdminSeatQuery, SeatSchema } from "./model";
import { presentAdminSeats, presentSeat } from "./present";

export function seatAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/seats/admin" })
    .use(guard)
    .get("/admin/licenses/:id/seats", async ({ actor, params, query }) => ok(presentAdminSeats(await adminListSeats(deps, actor, params.id, query))), {
      scopes: ["licenses:write"],
      params: t.Object({ id: Uuid }),
      query: AdminSeatQuery,
      response: { 200: Envelope(AdminSeatList), ...errors(401, 403, 404) },
      detail: { tags: ["Admin: licenses"], summary: "Seats of a license, removed ones included, in invite order with cursor pagination" },
    })
    .post("/admin/licenses/:id/seats/:seat_id/remove", async ({ actor, params }) => ok(presentSeat(await adminRemoveSeat(deps, actor, params.id, params.seat_id))), {
      scopes: ["licenses:write"],
      params: AdminSeatParams,
      response: { 200: Envelope(SeatSchema), ...errors(401, 403, 404) },
      detail: {
        tags: ["Admin: licenses"],
        summary: "Remove a seat (soft; audited)",
        description: "Sets removed_at and kills an outstanding invite. Removing a removed seat again answers 200 and changes nothing. 404 NOT_FOUND for a seat of another license.",
      },
    });
}
