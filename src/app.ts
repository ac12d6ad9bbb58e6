// The front door: one HTTP application made of areas, each an app of its own behind the same
// pipeline (http/pipeline.ts). No environment, no listen: server.ts and the tests call this.
//
// - The client area (areas/client.ts: the license API, feeds, downloads, keys, health) is composed
//   at start, and the lane (http/lane.ts) serves its hot routes.
// - The console area (areas/console.ts: admin, sign-in, portal, payments, the API document) is
//   imported and composed on the first request for one of its paths (CONSOLE_PREFIXES): its
//   modules and ~110 routes were most of a start's time and memory, and a node that only serves
//   client apps never needs them. Requests that arrive while it loads wait for it; it loads once.
//
// Which area a request goes to is decided by its path alone, before any hook runs, so each request
// runs exactly one area's pipeline. test/http/areas.test.ts checks that every route is in the area
// its path names, and that an unknown path gets the same 404 from either area.
import type { AnyElysia } from "elysia";
import type { Server } from "bun";
import type { Deps } from "./deps";
import { API_PREFIX, createPipeline, LANE_PATHS } from "./http/pipeline";
import { createLane, type Lane } from "./http/lane";
import { pathOf } from "./http/request-context";
import { errorResponse } from "./http/error-handler";
import { clientArea } from "./areas/client";

export { API_PREFIX, LANE_PATHS } from "./http/pipeline";

/**
 * The console area's paths: a path equal to one of these or under it ("/x" covers "/x/…"), or
 * starting with one that ends in "/". Every other path is the client area's (which answers 404 for
 * paths no area has).
 */
export const CONSOLE_PREFIXES: readonly string[] = [
  `${API_PREFIX}/admin/`,
  `${API_PREFIX}/auth/`,
  `${API_PREFIX}/portal/`,
  `${API_PREFIX}/invites/`,
  `${API_PREFIX}/webhooks/`,
  `${API_PREFIX}/license/checkout`,
  `${API_PREFIX}/license/support/`,
  `${API_PREFIX}/docs`,
  `${API_PREFIX}/openapi.json`,
  "/checkout/",
  "/portal/",
];

export function isConsolePath(path: string): boolean {
  for (const prefix of CONSOLE_PREFIXES) {
    if (!path.startsWith(prefix)) continue;
    if (prefix.endsWith("/") || path.length === prefix.length || path.charCodeAt(prefix.length) === 47 /* / */) return true;
  }
  return false;
}

export interface RouteInfo {
  method: string;
  path: string;
  hooks?: Record<string, unknown>;
  /** The area whose app serves the route. */
  area: "client" | "console";
}

export interface App {
  /** A request in process (tests, scripts): the lane's routes, else the area its path names. */
  handle(request: Request): Promise<Response>;
  /** The listening server's handler for what Bun's router does not serve (the lane's routes). */
  fetch(request: Request): Response | Promise<Response>;
  /** The lane's routes, for Bun's router (server.ts). */
  readonly laneRoutes: Lane["routes"];
  /** Every area's routes, loading the areas not loaded yet. */
  routes(): Promise<RouteInfo[]>;
  /** The areas composed so far ("client" always; "console" after its first request). */
  loadedAreas(): string[];
  /** Called once listening: its socket peers name the clients (http/request-context.ts). */
  listening(server: Server<unknown> | null): void;
}

export function createApp(deps: Deps): App {
  const pipeline = createPipeline(deps);
  const client = clientArea(deps, pipeline);
  // The lane: the public license API's routes run their lifecycle without Elysia's per-request
  // machinery, from Bun's native router when listening and from `handle` in process. Same route
  // declarations, hooks and validators; other spellings of these paths stay Elysia's.
  const lane = createLane(client, LANE_PATHS);

  let consoleApp: AnyElysia | null = null;
  let loading: Promise<AnyElysia> | null = null;
  const loadConsole = (): Promise<AnyElysia> =>
    (loading ??= import("./areas/console")
      .then(({ consoleArea }) => {
        const app = consoleArea(deps, pipeline, async () => [client, await loadConsole()]);
        app.server = pipeline.server.current;
        consoleApp = app;
        return app;
      })
      .catch((e: unknown) => {
        loading = null; // not kept: the next request tries again
        throw e;
      }));

  // Elysia's `fetch` (its composed handler; `handle` only wraps it in an async function). The area
  // cannot load only through a defect (its modules are part of the build): the request still gets
  // the spec's envelope, the cause goes to the log, and the next request tries again.
  const toConsole = (request: Request): Response | Promise<Response> =>
    consoleApp
      ? consoleApp.fetch(request)
      : loadConsole().then(
          (app) => app.fetch(request),
          (error: unknown) => {
            deps.logger.error("the console area could not be loaded", { error });
            return errorResponse(request, "INTERNAL_ERROR", "An internal error occurred.", null);
          },
        );
  const dispatch = (request: Request): Response | Promise<Response> =>
    isConsolePath(pathOf(request.url)) ? toConsole(request) : client.fetch(request);

  return {
    handle: async (request) => lane.find(request)?.(request) ?? dispatch(request),
    fetch: dispatch,
    laneRoutes: lane.routes,
    async routes() {
      const areas = [
        ["client", client],
        ["console", await loadConsole()],
      ] as const;
      return areas.flatMap(([area, app]) => (app.routes as Omit<RouteInfo, "area">[]).map((r) => ({ method: r.method, path: r.path, hooks: r.hooks, area })));
    },
    loadedAreas: () => (consoleApp ? ["client", "console"] : ["client"]),
    listening(server) {
      pipeline.server.current = server;
      client.server = server;
      if (consoleApp) consoleApp.server = server;
    },
  };
}
