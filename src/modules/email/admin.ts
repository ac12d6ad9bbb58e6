import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { EmailListQuery, EmailSchema } from "./model";
import { presentEmail } from "./present";
import { listEmails } from "./service";

export function emailAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/email/admin" }).use(guard).get(
    "/admin/emails",
    async ({ actor, query }) => {
      const page = await listEmails(deps, actor, {
        status: query.status,
        template: query.template,
        to: query.to,
        cursor: query.cursor,
        limit: query.limit ?? 50,
      });
      return ok({ items: page.items.map(presentEmail), next_cursor: page.nextCursor });
    },
    {
      scopes: ["admin"],
      query: EmailListQuery,
      response: {
        200: Envelope(t.Object({ items: t.Array(EmailSchema), next_cursor: t.Union([t.String(), t.Null()]) })),
        ...errors(401, 403),
      },
      detail: {
        tags: ["Admin: emails"],
        summary: "Emails in the outbox (sign-in codes, invites), newest first, with their delivery status",
        description:
          "Never shows the secret values (codes, links): they are stored sealed. Filters: status, template, to (exact, case-insensitive). Cursor pagination: pass next_cursor back as cursor.",
      },
    },
  );
}
