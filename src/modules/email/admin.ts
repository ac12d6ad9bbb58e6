import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { EmailListQuery, EmailSchema, EmailTemplateNameParams, EmailTemplateViewSchema, PreviewEmailTemplateBody, PutEmailTemplateBody, RenderedEmailSchema } from "./model";
import { presentEmail, presentEmailTemplate, presentRendered } from "./present";
import { listEmails } from "./service";
import { listEmailTemplates, previewEmailTemplate, putEmailTemplate, resetEmailTemplate } from "./template-admin";

const templateDetail = (summary: string, description?: string) => ({ tags: ["Admin: emails"], summary, ...(description ? { description } : {}) });

export function emailAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/email/admin" })
    .use(guard)
    .get("/admin/email-templates", async ({ actor }) => ok({ items: (await listEmailTemplates(deps, actor)).map(presentEmailTemplate) }), {
      scopes: ["admin"],
      response: { 200: Envelope(t.Object({ items: t.Array(EmailTemplateViewSchema) })), ...errors(401, 403) },
      detail: templateDetail("The editable email templates (lifecycle, payment, sign-in code and seat invite emails): subject and body in effect, defaults, placeholders"),
    })
    .put(
      "/admin/email-templates/:name",
      async ({ actor, params, body }) => ok(presentEmailTemplate(await putEmailTemplate(deps, actor, params.name, body))),
      {
        scopes: ["admin"],
        params: EmailTemplateNameParams,
        body: PutEmailTemplateBody,
        response: { 200: Envelope(EmailTemplateViewSchema), ...errors(400, 401, 403, 404) },
        detail: templateDetail(
          "Override the subject and body of an editable email template",
          "Placeholders are {{name}} with the names the template lists; an unknown placeholder, or a stray {{ or }}, is 400 VALIDATION_ERROR. Secret placeholders (license_key, code, accept_url) are allowed in the body only; a sign_in_code body without {{code}}, or a seat_invite body without {{accept_url}}, is 400 VALIDATION_ERROR. The text is plain: the HTML part is generated from it, escaped. Applies to emails sent from now on, including ones already waiting in the outbox.",
        ),
      },
    )
    .delete(
      "/admin/email-templates/:name",
      async ({ actor, params }) => ok(presentEmailTemplate(await resetEmailTemplate(deps, actor, params.name))),
      {
        scopes: ["admin"],
        params: EmailTemplateNameParams,
        response: { 200: Envelope(EmailTemplateViewSchema), ...errors(401, 403, 404) },
        detail: templateDetail("Reset an editable email template to its default"),
      },
    )
    .post(
      "/admin/email-templates/:name/preview",
      async ({ actor, params, body }) => ok(presentRendered(await previewEmailTemplate(deps, actor, params.name, body))),
      {
        scopes: ["admin"],
        params: EmailTemplateNameParams,
        body: PreviewEmailTemplateBody,
        response: { 200: Envelope(RenderedEmailSchema), ...errors(400, 401, 403, 404) },
        detail: templateDetail(
          "Render an editable email template with sample (or given) data and the current settings",
          "Without subject/body it renders the template in effect (sign_in_code and seat_invite without an override: their designed default HTML, as sent); with them, that text (checked as a save would be). `data` replaces sample values.",
        ),
      },
    )
    .get(
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
        summary: "Emails in the outbox (sign-in codes, invites, lifecycle and payment emails), newest first, with their delivery status",
        description:
          "Never shows the secret values (codes, links, license keys): they are stored sealed. Filters: status, template, to (exact, case-insensitive). Cursor pagination: pass next_cursor back as cursor.",
      },
    },
  );
}
