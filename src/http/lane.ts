// The lane: the public license API served from Bun's native router, each route's lifecycle run by one
// plain function instead of Elysia's per-request machinery.
//
// Why: these routes are what every client app calls at every start (verify above all), and on a
// listening server Elysia's per-request machinery (its context, the awaited hook chain, response
// mapping) cost a verify more than its SQLite read: measured on the bench machine, a verify took
// about 190 µs of server CPU through it and about 160 µs through the lane, where a bare Bun.serve
// doing one read and one signature takes about 115 (docs/performance.md, "The lane").
//
// What the lane is not: a second implementation of the routes. Each lane route is declared in its
// module like any route (schemas, handler, OpenAPI detail), and the lane takes that declaration from
// the app's route table: the route's own handler, validators built by Elysia's own functions from the
// route's own schemas, and the hooks the route carries (the app's request, parse, error and
// after-response hooks), run in Elysia's order with Elysia's rules:
//   request hooks (the first answer ends the request) → parse hooks (the first value is the body) →
//   body schema (400 through the error hooks) → handler → response schema → JSON, or the error
//   hooks' answer → after-response hooks.
// A route carrying any other kind of hook (beforeHandle, transform, derive, …) or schema (query,
// headers, …) is refused when the lane is built, so nothing a route declares is ever skipped. Elysia
// still serves every other spelling of these paths (a trailing slash, another method) itself; the
// same requests get the same answers either way (test/http/lane.test.ts compares them byte for byte).
import {
  ElysiaCustomStatusResponse,
  ERROR_CODE,
  getResponseSchemaValidator,
  getSchemaValidator,
  ParseError,
  redirect,
  status,
  ValidationError,
  type AnyElysia,
} from "elysia";
import { CloneType, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { pathOf } from "./request-context";

type HookFn = (context: LaneContext, ...rest: unknown[]) => unknown;
type Hook = HookFn | { fn: HookFn };
const fnOf = (hook: Hook): HookFn => (typeof hook === "function" ? hook : hook.fn);

interface Check {
  Check(value: unknown): boolean;
}

/** Elysia's validator of a body schema; `hasDefault` adds a step before Check. */
interface BodyValidator extends Check {
  schema: TSchema;
  hasDefault?: boolean;
}

const TRANSFORM = Symbol.for("TypeBox.Transform");
const OPTIONAL = Symbol.for("TypeBox.Optional");

/** Steps Elysia takes around Check that the lane does not: a transform (decode) anywhere, an optional body. */
function hasTransform(schema: unknown): boolean {
  if (schema === null || typeof schema !== "object") return false;
  if (TRANSFORM in schema) return true;
  const node = schema as { properties?: Record<string, unknown>; items?: unknown; anyOf?: unknown[]; allOf?: unknown[]; patternProperties?: Record<string, unknown> };
  return (
    Object.values(node.properties ?? {}).some(hasTransform) ||
    Object.values(node.patternProperties ?? {}).some(hasTransform) ||
    hasTransform(node.items) ||
    (node.anyOf ?? []).some(hasTransform) ||
    (node.allOf ?? []).some(hasTransform)
  );
}

/** A required TypeBox object schema without transforms: Elysia parses, defaults and checks it, nothing more. */
function isPlainObjectSchema(schema: TSchema): boolean {
  return schema.type === "object" && !("~standard" in schema) && (schema as unknown as Record<symbol, unknown>)[OPTIONAL] !== "Optional" && !hasTransform(schema);
}

/** The context hooks and handlers receive: the subset of Elysia's that a route without derive/resolve has. */
interface LaneContext {
  request: Request;
  path: string;
  url: string;
  store: unknown;
  server: unknown;
  redirect: typeof redirect;
  status: typeof status;
  set: { headers: Record<string, string>; status: number };
  contentType?: string;
  body?: unknown;
  error?: unknown;
  code?: unknown;
}

/** Answers one request of one lane route (method and exact path already matched). */
export type LaneHandler = (request: Request) => Promise<Response>;

export interface Lane {
  /** Bun.serve `routes` entries: exact path → method → handler. */
  readonly routes: Record<string, Record<string, LaneHandler>>;
  /** The handler for a request's method and exact path (query string ignored), if the lane serves it. */
  find(request: Request): LaneHandler | undefined;
}

/** What the lane reads of an Elysia instance, some of it private in Elysia's types. */
interface ElysiaInternals {
  event: Record<string, unknown>;
  setHeaders?: Record<string, string>;
  definitions: { type: Record<string, unknown>; typebox: unknown };
  config: { normalize?: boolean; aot?: boolean; sanitize?: unknown };
  store: unknown;
  server: unknown;
}

/** Kinds of hook the lane runs. Any other kind on a lane route makes createLane throw. */
const RUN = new Set(["request", "parse", "error", "afterResponse"]);
/** Route schemas the lane validates. */
const VALIDATE = new Set(["body", "response"]);
/** Route options and app lifecycle hooks that run nothing per request. */
const INERT = new Set(["detail", "config", "tags", "start", "stop"]);

const hooksOf = (hooks: Record<string, unknown> | undefined, kind: string): HookFn[] => {
  const list = hooks?.[kind];
  return Array.isArray(list) ? (list as Hook[]).map(fnOf) : [];
};

/**
 * A Response from a hook or handler with what the request set added where absent (its request id),
 * and the set status when the response says 200: Elysia's mergeHeaders and mergeStatus.
 */
function withSet(response: Response, set: LaneContext["set"]): Response {
  const status = response.status === 200 ? set.status : response.status;
  let missing = false;
  for (const name in set.headers) if (!response.headers.has(name)) missing = true;
  if (!missing && status === response.status) return response;
  const headers = new Headers(response.headers);
  for (const name in set.headers) if (!headers.has(name)) headers.set(name, set.headers[name]!);
  return new Response(response.body, { status, headers });
}

/** What Elysia answers for a handler's value (adapter/bun mapResponse, for the values routes return). */
function toResponse(value: unknown, set: LaneContext["set"]): Response {
  if (value instanceof Response) return withSet(value, set);
  if (value !== null && typeof value === "object") {
    // Headers set one by one on Response.json's own: measured cheaper than a headers object in
    // the init (the request id is the one header a lane response usually carries).
    const response = set.status === 200 ? Response.json(value) : Response.json(value, { status: set.status });
    for (const name in set.headers) response.headers.set(name, set.headers[name]!);
    return response;
  }
  const init = { status: set.status, headers: set.headers };
  if (value === undefined || value === null) return new Response("", init);
  if (typeof value === "string") return new Response(value, init);
  return new Response(String(value), init);
}

export function createLane(app: AnyElysia, paths: readonly string[]): Lane {
  const requestHooks = hooksOf((app as unknown as ElysiaInternals).event, "request");
  const routes: Record<string, Record<string, LaneHandler>> = {};
  for (const path of paths) {
    const route = app.routes.find((r) => r.method === "POST" && r.path === path);
    if (!route) throw new Error(`lane: no POST ${path} in the route table`);
    routes[path] = { POST: compileRoute(app, route, requestHooks) };
  }
  return {
    routes,
    find(request) {
      return routes[pathOf(request.url)]?.[request.method];
    },
  };
}

function compileRoute(elysia: AnyElysia, route: AnyElysia["routes"][number], requestHooks: HookFn[]): LaneHandler {
  const app = elysia as unknown as ElysiaInternals;
  const hooks = route.hooks as Record<string, unknown>;
  for (const [key, value] of Object.entries(hooks)) {
    const declared = Array.isArray(value) ? value.length > 0 : value !== undefined && value !== null;
    if (declared && !RUN.has(key) && !VALIDATE.has(key) && !INERT.has(key)) {
      throw new Error(`lane: POST ${route.path} declares "${key}", which the lane does not run; serve it through Elysia`);
    }
  }
  if (app.setHeaders && Object.keys(app.setHeaders).length > 0) throw new Error("lane: default response headers are not supported");
  if (typeof route.handler !== "function") throw new Error(`lane: POST ${route.path} has no handler function`);
  const handler = route.handler as unknown as (context: LaneContext) => unknown;
  const parseHooks = hooksOf(hooks, "parse");
  if (parseHooks.length === 0) throw new Error(`lane: POST ${route.path} has no body parser`);
  const errorHooks = hooksOf(hooks, "error");
  const afterResponse = hooksOf(hooks, "afterResponse");

  const bodySchema = hooks.body as TSchema | undefined;
  if (bodySchema && !isPlainObjectSchema(bodySchema)) {
    throw new Error(`lane: POST ${route.path} has a body schema the lane does not handle (a required object schema without transforms)`);
  }
  const declared = hooks.response as Record<string, TSchema> | undefined;
  // Built on the route's first request, as Elysia builds its validators (compiling them all at boot
  // cost the executable's start-up about 20 ms), and exactly as Elysia builds them (index.ts `add`),
  // from copies: Elysia's builders amend the schema they are given (additionalProperties), and the
  // route's own schema objects are what the OpenAPI document is generated from.
  let validators: { body: BodyValidator | null; defaults: string | null; response: Record<number, Check> } | null = null;
  const validate = () => {
    if (validators) return validators;
    const { config, definitions } = app;
    const options = {
      models: definitions.type,
      modules: definitions.typebox,
      normalize: config.normalize,
      dynamic: !config.aot,
      sanitize: () => config.sanitize,
    } as NonNullable<Parameters<typeof getSchemaValidator>[1]> & NonNullable<Parameters<typeof getResponseSchemaValidator>[1]>;
    const body = bodySchema ? (getSchemaValidator(CloneType(bodySchema), options) as unknown as BodyValidator) : null;
    validators = {
      body,
      // Defaults of the body's optional fields, laid under the parsed body as Elysia does
      // (`c.body = Object.assign(<defaults>, c.body)`), from a fresh copy each time.
      defaults: body?.hasDefault ? JSON.stringify(Value.Default(body.schema, {})) : null,
      response: declared
        ? (getResponseSchemaValidator(Object.fromEntries(Object.entries(declared).map(([s, schema]) => [s, CloneType(schema)])), options) as unknown as Record<
            number,
            Check
          >)
        : {},
    };
    return validators;
  };

  const finish = (c: LaneContext, res: Response): Response => {
    if (afterResponse.length > 0) {
      c.set.status = res.status;
      // After the answer, as Elysia schedules them; a failing hook must not touch the response.
      setImmediate(async () => {
        for (const hook of afterResponse) {
          try {
            await hook(c);
          } catch {
            // Elysia drops after-response failures too.
          }
        }
      });
    }
    return res;
  };

  const fail = async (c: LaneContext, error: unknown): Promise<Response> => {
    if (!c.set.status || c.set.status < 300) c.set.status = (error as { status?: number } | null)?.status || 500;
    c.error = error;
    c.code = (error as Record<string | symbol, unknown> | null)?.code ?? (error as Record<symbol, unknown> | null)?.[ERROR_CODE] ?? "UNKNOWN";
    for (const hook of errorHooks) {
      let answer = hook(c);
      if (answer instanceof Promise) answer = await answer;
      if (answer !== undefined) return finish(c, toResponse(answer, c.set));
    }
    // Elysia's own fallback would echo the error's message; the lane answers without a body.
    return finish(c, new Response(null, { status: 500 }));
  };

  return async (request) => {
    const c: LaneContext = {
      request,
      // The route's path, as Elysia gives a static route's hooks: the lane serves exact paths only.
      path: route.path,
      get url() {
        return request.url;
      },
      store: app.store,
      server: app.server,
      redirect,
      status,
      set: { headers: Object.create(null) as Record<string, string>, status: 200 },
    };
    // Request hooks: request id, client address, rate limits. Their failures and early answers skip
    // the rest, the after-response hooks included, as in Elysia's route handler.
    try {
      for (const hook of requestHooks) {
        let early = hook(c);
        if (early instanceof Promise) early = await early;
        if (early !== undefined) return toResponse(early, c.set);
      }
    } catch (error) {
      return fail(c, error);
    }
    try {
      // The content type without parameters. Elysia reads it only when the request has a body; the
      // app's parser reads the body first and ignores the type of an empty one, so the header is
      // taken as is (touching request.body would build a stream the parser then has to drain).
      const type = request.headers.get("content-type") ?? "";
      const semicolon = type.indexOf(";");
      c.contentType = semicolon === -1 ? type : type.slice(0, semicolon);
      try {
        for (const hook of parseHooks) {
          let parsed = hook(c, c.contentType);
          if (parsed instanceof Promise) parsed = await parsed;
          if (parsed !== undefined) {
            c.body = parsed;
            break;
          }
        }
      } catch (error) {
        throw new ParseError(error as Error);
      }
      delete c.contentType;
      const { body, defaults, response } = validate();
      if (defaults !== null) c.body = Object.assign(JSON.parse(defaults) as object, c.body);
      if (body && !body.Check(c.body)) {
        c.set.status = 422;
        throw new ValidationError("body", body as never, c.body, false);
      }
      let result = handler(c);
      if (result instanceof Promise) result = await result;
      if (result instanceof ElysiaCustomStatusResponse) {
        c.set.status = result.code as number;
        result = result.response;
      }
      if (!(result instanceof Response)) {
        const check = response[c.set.status];
        if (check && !check.Check(result)) throw new ValidationError("response", check as never, result, false);
      }
      return finish(c, toResponse(result, c.set));
    } catch (error) {
      return fail(c, error);
    }
  };
}
