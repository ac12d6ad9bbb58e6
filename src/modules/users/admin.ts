import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Envelope, errors, ok } from "../../http/envelope";
import { effectiveRole } from "./domain";
import { getUser, grantRole, listUsers, removeUser, setUserRole, signOutUser } from "./service";
import type { User } from "./repo";

// Literal unions, not t.UnionEnum: Elysia 1.4 gives a UnionEnum its first value as default, so a
// missing role would silently become "admin".
const Role = t.Union([t.Literal("admin"), t.Literal("support"), t.Literal("viewer")]);

const UserSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    email: t.String(),
    role: t.Union([Role, t.Null()], { description: "Stored admin role; null for customers" }),
    effective_role: t.Union([Role, t.Null()], { description: "Role in force: ADMIN_EMAILS addresses are always admin" }),
    managed_by_config: t.Boolean({ description: "Listed in ADMIN_EMAILS: the API cannot change or remove it" }),
    created_at: t.String({ format: "date-time" }),
    last_sign_in_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  },
  { title: "User", additionalProperties: false },
);

const IdParams = t.Object({ id: t.String({ format: "uuid" }) });
const detail = (summary: string, description?: string) => ({ tags: ["Admin: users"], summary, ...(description ? { description } : {}) });

export function userAdminRoutes(deps: Deps, guard: AdminGuard) {
  const present = (u: User) => ({
    id: u.id,
    email: u.email,
    role: u.role,
    effective_role: effectiveRole(u, deps.config.adminEmails),
    managed_by_config: deps.config.adminEmails.includes(u.email),
    created_at: u.createdAt.toISOString(),
    last_sign_in_at: u.lastSignInAt?.toISOString() ?? null,
  });
  return new Elysia({ name: "keyward/users/admin" })
    .use(guard)
    .get(
      "/admin/users",
      async ({ actor, query }) => {
        const page = await listUsers(deps, actor, { role: query.role, search: query.search, cursor: query.cursor, limit: query.limit ?? 50 });
        return ok({ items: page.items.map(present), next_cursor: page.nextCursor });
      },
      {
        scopes: ["admin"],
        query: t.Object({
          role: t.Optional(t.Union([t.Literal("admin"), t.Literal("support"), t.Literal("viewer"), t.Literal("admins")], { description: "`admins`: any admin role" })),
          search: t.Optional(t.String({ minLength: 1, maxLength: 320, description: "Substring of the email, case-insensitive" })),
          cursor: t.Optional(t.String({ maxLength: 512 })),
          limit: t.Optional(t.QueryInteger({ minimum: 1, maximum: 200 })),
        }),
        response: { 200: Envelope(t.Object({ items: t.Array(UserSchema), next_cursor: t.Union([t.String(), t.Null()]) })), ...errors(401, 403) },
        detail: detail("List users (customers who signed in, seat holders, admins), newest first"),
      },
    )
    .post(
      "/admin/users",
      async ({ actor, body }) => ok(present(await grantRole(deps, actor, { email: body.email, role: body.role }))),
      {
        scopes: ["admin"],
        body: t.Object({ email: t.String({ format: "email", maxLength: 320 }), role: Role }, { additionalProperties: false }),
        response: { 200: Envelope(UserSchema), ...errors(401, 403, 409) },
        detail: detail(
          "Give an address an admin role",
          "Creates the user when the address has never signed in; they sign in with that address (email code or OAuth) and get the role at once.",
        ),
      },
    )
    .get("/admin/users/:id", async ({ actor, params }) => ok(present(await getUser(deps, actor, params.id))), {
      scopes: ["admin"],
      params: IdParams,
      response: { 200: Envelope(UserSchema), ...errors(401, 403, 404) },
      detail: detail("Fetch one user"),
    })
    .post("/admin/users/:id/role", async ({ actor, params, body }) => ok(present(await setUserRole(deps, actor, params.id, body.role))), {
      scopes: ["admin"],
      params: IdParams,
      body: t.Object({ role: t.Union([Role, t.Null()], { description: "null removes admin access" }) }, { additionalProperties: false }),
      response: { 200: Envelope(UserSchema), ...errors(401, 403, 404, 409) },
      detail: detail(
        "Set or clear a user's admin role",
        "Applies on the user's next request. 409 USER_MANAGED_BY_CONFIG for an ADMIN_EMAILS address; 409 LAST_ADMIN when it would leave no admin.",
      ),
    })
    .delete(
      "/admin/users/:id",
      async ({ actor, params }) => {
        await removeUser(deps, actor, params.id);
        return ok({});
      },
      {
        scopes: ["admin"],
        params: IdParams,
        response: { 200: Envelope(t.Object({}, { additionalProperties: false })), ...errors(401, 403, 404, 409) },
        detail: detail(
          "Remove a user",
          "Ends its sessions at once. Its seats stay (unbound) and its licenses are untouched. 409 USER_MANAGED_BY_CONFIG / LAST_ADMIN as for role changes.",
        ),
      },
    )
    .post("/admin/users/:id/sign-out", async ({ actor, params }) => ok({ sessions_ended: await signOutUser(deps, actor, params.id) }), {
      scopes: ["admin"],
      params: IdParams,
      response: { 200: Envelope(t.Object({ sessions_ended: t.Integer() }, { additionalProperties: false })), ...errors(401, 403, 404) },
      detail: detail("End every session of a user"),
    });
}
