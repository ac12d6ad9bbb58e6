// A local webhook receiver for tests: Bun.serve on 127.0.0.1 and a free port, plain HTTP or, with
// `tls` (a certificate and key, e.g. from tls-certs.ts), HTTPS. Each path answers what its handler
// says (default 200 "ok"); every request is recorded with its headers and raw body.
// `waitFor(path, n)` resolves once that path has received n requests.

export interface ReceivedHook {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** webhook-id, webhook-timestamp and webhook-signature, for short. */
  id: string;
  timestamp: string;
  signature: string;
}

/** Answers the n-th request (1-based) to its path; `req` is the raw request (its signal aborts when the sender hangs up). */
export type HookHandler = (hook: ReceivedHook, n: number, req: Request) => Response | Promise<Response>;

export interface WebhookReceiver {
  url(path: string): string;
  received: ReceivedHook[];
  at(path: string): ReceivedHook[];
  on(path: string, handler: HookHandler): void;
  waitFor(path: string, n: number): Promise<void>;
  stop(): Promise<void>;
}

export function startWebhookReceiver(opts: { tls?: { cert: string; key: string } } = {}): WebhookReceiver {
  const received: ReceivedHook[] = [];
  const handlers = new Map<string, HookHandler>();
  const waiters: { path: string; n: number; resolve: () => void }[] = [];
  const at = (path: string) => received.filter((h) => h.path === path);
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    ...(opts.tls ? { tls: opts.tls } : {}),
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const headers = Object.fromEntries(req.headers.entries());
      const hook: ReceivedHook = {
        path,
        headers,
        body: await req.text(),
        id: headers["webhook-id"] ?? "",
        timestamp: headers["webhook-timestamp"] ?? "",
        signature: headers["webhook-signature"] ?? "",
      };
      received.push(hook);
      const n = at(path).length;
      for (const w of waiters.filter((w) => w.path === path && n >= w.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const handler = handlers.get(path);
      return handler ? handler(hook, n, req) : new Response("ok", { status: 200 });
    },
  });
  return {
    url: (path) => `${opts.tls ? "https" : "http"}://127.0.0.1:${server.port}${path}`,
    received,
    at,
    on: (path, handler) => void handlers.set(path, handler),
    waitFor: (path, n) => (at(path).length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ path, n, resolve }))),
    stop: async () => {
      await server.stop(true);
    },
  };
}
