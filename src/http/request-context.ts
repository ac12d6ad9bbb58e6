// Per-request facts gathered in onRequest, before parsing, so even a request that fails to parse has
// a request id and a client address. Kept in a WeakMap keyed by the Request: no globals, no leaks.
import { newId } from "../shared/ids";

export interface RequestContext {
  requestId: string;
  ip: string;
  startedAt: number;
  /** The raw JSON body text, kept by the body parser for Idempotency-Key body hashing. */
  rawBody?: string;
  /** Set when an error response is built, for the access log. */
  status?: number;
}

const contexts = new WeakMap<Request, RequestContext>();
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

interface ServerLike {
  requestIP(request: Request): { address: string } | null;
}

/** The client address of a request that did not come through a listening server. */
export const NO_PEER = "in-process";

/**
 * The client address: the socket peer, or what trusted proxies say in X-Forwarded-For (`resolve` is
 * built once from TRUST_PROXY by clientAddressResolver in ./trusted-proxies.ts).
 */
export function clientIp(
  request: Request,
  server: ServerLike | null | undefined,
  resolve: (xff: string | null, peer: string | null) => string,
): string {
  // No server: the app is driven in-process (app.handle in tests); there is no peer to name.
  return resolve(request.headers.get("x-forwarded-for"), server?.requestIP(request)?.address ?? null);
}

/** The path of an absolute request URL, without parsing the whole URL (hot path). */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const end = url.indexOf("?", start);
  return end < 0 ? url.slice(start) : url.slice(start, end);
}

export function beginRequest(request: Request, ip: string, startedAt: number): RequestContext {
  const incoming = request.headers.get("x-request-id");
  const ctx: RequestContext = {
    requestId: incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : newId(),
    ip,
    startedAt,
  };
  contexts.set(request, ctx);
  return ctx;
}

export function requestContext(request: Request): RequestContext {
  return contexts.get(request) ?? { requestId: newId(), ip: NO_PEER, startedAt: 0 };
}
