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
  const app = createApp(deps).listen({
    hostname: deps.config.host,
    port: deps.config.port,
    // The largest body any route accepts (artifacts only with the local storage driver); each route
    // still stops reading at its own limit (http/body.ts, storage/local.ts).
    maxRequestBodySize: serverMaxRequestBodySize(deps.config),
    // Elysia's Bun adapter defaults to SO_REUSEPORT: a second instance on a busy port would then
    // silently share its traffic instead of failing. A port conflict must stop the boot.
    reusePort: false,
  });
  const server = app.server!;
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
