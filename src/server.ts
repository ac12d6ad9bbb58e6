// Listening and graceful shutdown: stop accepting, let in-flight requests finish (bounded by
// SHUTDOWN_GRACE_MS), run onStop (jobs), then close the database.
import type { Deps } from "./deps";
import { createApp } from "./app";
import { serverMaxRequestBodySize } from "./http/body";
import { stopBackgroundRuns } from "./jobs/runner";

export interface RunningServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export function startServer(deps: Deps, opts: { onStop?: () => void | Promise<void> } = {}): RunningServer {
  const app = createApp(deps);
  // Keyward listens itself rather than through Elysia's listen, which composes the app's handler
  // three times and reloads the server twice: Bun's router serves the lane's routes, `app.fetch`
  // everything else (the area its path names).
  const server = Bun.serve({
    hostname: deps.config.host,
    port: deps.config.port,
    routes: app.laneRoutes,
    fetch: app.fetch,
    // Bun's development mode answers an uncaught error with a page of source; errors here leave in
    // the spec's envelope (http/error-handler.ts) and never reach Bun.
    development: false,
    // Elysia's default, kept: an idle keep-alive connection is closed after 30 s.
    idleTimeout: 30,
    // The largest body any route accepts (artifacts only with the local storage driver); each route
    // still stops reading at its own limit (http/body.ts, storage/local.ts).
    maxRequestBodySize: serverMaxRequestBodySize(deps.config),
    // Elysia's Bun adapter defaults to SO_REUSEPORT: a second instance on a busy port would then
    // silently share its traffic instead of failing. A port conflict must stop the boot.
    reusePort: false,
  });
  app.listening(server);
  let stopping: Promise<void> | null = null;
  return {
    url: `http://${deps.config.host.includes(":") ? `[${deps.config.host}]` : deps.config.host}:${server.port}`,
    port: server.port ?? deps.config.port,
    stop() {
      stopping ??= (async () => {
        const graceful = server.stop(false);
        let timer: ReturnType<typeof setTimeout> | undefined;
        const deadline = new Promise<void>((r) => (timer = setTimeout(r, deps.config.shutdownGraceMs)));
        await Promise.race([graceful, deadline]);
        clearTimeout(timer);
        await server.stop(true);
        await opts.onStop?.();
        // Passes started by a request in the background (POST /admin/system/run-expiry-checks) stop
        // at their next page and record it, before the database closes under them.
        await stopBackgroundRuns(deps);
        await deps.db.close();
      })();
      return stopping;
    },
  };
}
