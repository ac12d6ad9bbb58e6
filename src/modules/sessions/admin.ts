import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { assertSystemWide } from "../../shared/actor";
import { AppError } from "../../shared/errors";
import { endSession } from "./service";
import type { Session } from "./repo";

const SessionSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    user_id: t.String({ format: "uuid" }),
    method: t.String({ description: "otp, dev, invite or oauth:<provider>" }),
    ip: t.Union([t.String(), t.Null()]),
    user_agent: t.Union([t.String(), t.Null()]),
    created_at: t.String({ format: "date-time" }),
    last_seen_at: t.String({ format: "date-time", description: "Recorded at most every 5 minutes" }),
    expires_at: t.String({ format: "date-time" }),
    absolute_expires_at: t.String({ format: "date-time" }),
  },
  { title: "Session", additionalProperties: false },
);

const present = (s: Session) => ({
  id: s.id,
  user_id: s.userId,
  method: s.method,
  ip: s.ip,
  user_agent: s.userAgent,
  created_at: s.createdAt.toISOString(),
  last_seen_at: s.lastSeenAt.toISOString(),
  expires_at: s.idleExpiresAt.toISOString(),
  absolute_expires_at: s.absoluteExpiresAt.toISOString(),
});

const detail = (summary: string) => ({ tags: ["Admin: users"], summary });

export function sessionAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/sessions/admin" })
    .use(guard)
    .get(
      "/admin/sessions",
      async ({ actor, query }) => {
        assertSystemWide(actor);
        const page = await deps.repos.sessions.list({ userId: query.user_id, aliveAt: deps.clock.now(), cursor: query.cursor, limit: query.limit ?? 50 });
        return ok({ items: page.items.map(present), next_cursor: page.nextCursor });
      },
      {
        scopes: ["admin"],
        query: t.Object({
          user_id: t.Optional(t.String({ format: "uuid" })),
          cursor: t.Optional(t.String({ maxLength: 512 })),
          limit: t.Optional(t.QueryInteger({ minimum: 1, maximum: 200 })),
        }),
        response: { 200: Envelope(t.Object({ items: t.Array(SessionSchema), next_cursor: t.Union([t.String(), t.Null()]) })), ...errors(401, 403) },
        detail: detail("List live sessions, newest first"),
      },
    )
    .post(
      "/admin/sessions/:id/revoke",
      async ({ actor, params }) => {
        assertSystemWide(actor);
        const now = deps.clock.now();
        const gone = await endSession(deps, params.id, {
          audit: { actor, action: "session.revoke", entityType: "session", entityId: params.id, productId: null, changes: null, at: now },
        });
        if (!gone) throw new AppError("NOT_FOUND", { message: "Session not found." });
        return ok(present(gone));
      },
      {
        scopes: ["admin"],
        params: t.Object({ id: t.String({ format: "uuid" }) }),
        response: { 200: Envelope(SessionSchema), ...errors(401, 403, 404) },
        detail: detail("End one session at once"),
      },
    );
}
