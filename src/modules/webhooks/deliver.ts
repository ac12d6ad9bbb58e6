// Webhook requests: a pool (run continuously by the delivery worker, jobs/delivery-worker.ts, and once
// by the deliver-webhooks pass) claims due deliveries (exact across nodes) and POSTs them
// concurrently, capped per node and per endpoint, each bounded by a connect and a total timeout, so a
// receiver that never answers holds up only its own deliveries. Standard Webhooks headers; 2xx = delivered; 410 disables the endpoint; anything
// else (3xx included: redirects are never followed) is retried with the outbox's backoff and given
// up 3 days after the event; DISABLE_AFTER_CONSECUTIVE_FAILURES failures in a row disable the
// endpoint and email the admins (through the outbox, in the same transaction).
import { isIP } from "node:net";
import type { Deps } from "../../deps";
import { MINUTE, SECOND } from "../../shared/clock";
import { SYSTEM_ACTOR } from "../../shared/actor";
import { nextAttemptAfterFailure } from "../outbox/domain";
import type { Effects } from "../outbox/effects";
import { sealedEmail } from "../email/outbox";
import { DISABLE_AFTER_CONSECUTIVE_FAILURES, previousSecretLive, signedContent, v1Signature } from "./domain";
import type { AttemptOutcome, DisabledReason, WebhookDelivery, WebhookEndpoint } from "./repo";
import { claimDueDeliveries, settleAttempt } from "./claims";
import { openSecret, v1aSignature } from "./secrets";
import { hostOf, resolveTarget, type HostResolver } from "./ssrf";

/** Time to open the TCP connection (and finish TLS) to the receiver. */
export const CONNECT_TIMEOUT_MS = 5 * SECOND;
/** Time for the whole exchange, from the start to the end of the response (or its first 2 KB). */
export const TOTAL_TIMEOUT_MS = 15 * SECOND;
/** Bytes of the response body kept in the delivery log. */
export const RESPONSE_BODY_LIMIT = 2048;
/** A claim keeps other nodes off a delivery this long: well past TOTAL_TIMEOUT_MS. */
export const DELIVERY_CLAIM_MS = 2 * MINUTE;
/** Most deliveries one pass attempts; what is left is due for the next one. */
export const DELIVERY_MAX_PER_PASS = 1000;
const MAX_ERROR_LENGTH = 1000;
export const USER_AGENT = "Keyward-Webhooks/1";

export interface WebhookDeliveryCounts {
  claimed: number;
  delivered: number;
  /** Failed, due again later. */
  retried: number;
  /** Failed for good: 410, or still failing 3 days after the event. */
  failed: number;
  /** Endpoints this pass disabled (410 or too many failures in a row). */
  disabled: number;
  /** Attempted, but the claim had expired and another claim took the delivery meanwhile. */
  lost: number;
}

export interface PostResult {
  status: number;
  body: string;
  latencyMs: number;
}

export interface PostOptions {
  allowPrivate: boolean;
  resolve: HostResolver;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  /** deps.clock.monotonicMs: measures the latency. */
  monotonicMs: () => number;
}

/**
 * POSTs `body` to `url` once. The host is resolved and every address checked (ssrf.ts); the
 * connection goes to the first checked address (the lookup is pinned, so DNS cannot answer
 * differently at connect time). https:// targets get full certificate verification against the
 * system CAs plus NODE_EXTRA_CA_CERTS, for the URL's host name (not the pinned address). Never
 * follows a redirect. Rejects on a refused target, a network or TLS failure, or a timeout.
 */
export async function postWebhook(url: URL, body: string, headers: Record<string, string>, opts: PostOptions): Promise<PostResult> {
  const addresses = await resolveTarget(url, { allowPrivate: opts.allowPrivate, resolve: opts.resolve });
  const address = addresses[0]!;
  const family = isIP(address) === 6 ? 6 : 4;
  // node:http and node:https load with the first delivery, not at start-up (most starts deliver none).
  const client: Pick<typeof import("node:https"), "request"> = url.protocol === "https:" ? await import("node:https") : await import("node:http");
  const started = opts.monotonicMs();
  return await new Promise<PostResult>((resolve, reject) => {
    let settled = false;
    const timers: ReturnType<typeof setTimeout>[] = [];
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      fn();
    };
    const req = client.request(
      {
        protocol: url.protocol,
        hostname: hostOf(url),
        port: url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: "POST",
        agent: false,
        // The receiver's certificate is always verified (chain and name), whatever
        // NODE_TLS_REJECT_UNAUTHORIZED says. A private CA is trusted through NODE_EXTRA_CA_CERTS.
        rejectUnauthorized: true,
        headers: { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), "user-agent": USER_AGENT },
        lookup: ((_host: string, options: { all?: boolean } | undefined, cb: (...args: unknown[]) => void) => {
          if (options?.all) cb(null, [{ address, family }]);
          else cb(null, address, family);
        }) as never,
      },
      (res) => {
        const latencyMs = Math.round(opts.monotonicMs() - started);
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () =>
          finish(() => {
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString("utf8"), latencyMs });
            res.destroy();
          });
        res.on("data", (chunk: Buffer) => {
          if (size < RESPONSE_BODY_LIMIT) chunks.push(chunk);
          size += chunk.length;
          if (size >= RESPONSE_BODY_LIMIT) done();
        });
        res.on("end", done);
        res.on("error", (e) => finish(() => reject(e)));
      },
    );
    const fail = (message: string) => () => finish(() => {
      req.destroy();
      reject(new Error(message));
    });
    timers.push(setTimeout(fail(`connect timeout after ${opts.connectTimeoutMs} ms`), opts.connectTimeoutMs));
    timers.push(setTimeout(fail(`timeout after ${opts.totalTimeoutMs} ms`), opts.totalTimeoutMs));
    req.on("socket", (socket) => {
      const connected = () => clearTimeout(timers[0]);
      if (!socket.connecting) connected();
      socket.once(url.protocol === "https:" ? "secureConnect" : "connect", connected);
    });
    req.on("error", (e) => finish(() => reject(e)));
    req.end(body);
  });
}

/** Standard Webhooks headers of one attempt: `webhook-signature` holds every live signature, space-separated. */
export function signatureHeaders(
  deps: Pick<Deps, "secrets">,
  endpoint: WebhookEndpoint,
  delivery: Pick<WebhookDelivery, "id" | "body">,
  now: Date,
): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const content = signedContent(delivery.id, timestamp, delivery.body);
  const signatures = [v1Signature(openSecret(deps.secrets, endpoint.id, endpoint.secretEncrypted), content)];
  if (previousSecretLive(endpoint, now)) signatures.push(v1Signature(openSecret(deps.secrets, endpoint.id, endpoint.previousSecretEncrypted!), content));
  if (endpoint.signingKeyEncrypted) signatures.push(v1aSignature(deps.secrets, endpoint.id, endpoint.signingKeyEncrypted, content));
  return { "webhook-id": delivery.id, "webhook-timestamp": String(timestamp), "webhook-signature": signatures.join(" ") };
}

/** Every admin's address: users with the admin role and ADMIN_EMAILS, deduplicated. */
export async function adminRecipients(deps: Pick<Deps, "repos" | "config">): Promise<string[]> {
  const out = new Set(deps.config.adminEmails.map((e) => e.toLowerCase()));
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const page = await deps.repos.users.list({ role: "admin", cursor, limit: 200 });
    for (const u of page.items) out.add(u.email.toLowerCase());
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return [...out].sort();
}

/** The audit row and the admins' emails of an endpoint the delivery loop disabled. */
export function disableEffects(
  deps: Pick<Deps, "secrets">,
  endpoint: WebhookEndpoint,
  reason: DisabledReason,
  recipients: readonly string[],
  at: Date,
): Effects {
  let host: string;
  try {
    host = new URL(endpoint.url).host;
  } catch {
    host = "an endpoint";
  }
  const data = { endpoint_id: endpoint.id, url_host: host, description: endpoint.description, reason, failures: DISABLE_AFTER_CONSECUTIVE_FAILURES };
  return {
    audit: {
      actor: SYSTEM_ACTOR,
      action: "webhook.auto_disable",
      entityType: "webhook_endpoint",
      entityId: endpoint.id,
      productId: endpoint.productId,
      changes: { reason },
      at,
    },
    emails: recipients.map((to) => sealedEmail(deps.secrets, { template: "webhook_disabled", to, at, data })),
  };
}

type PassDeps = Pick<Deps, "db" | "repos" | "clock" | "config" | "logger" | "secrets" | "resolveHost">;

export interface PoolOptions {
  random?: () => number;
  connectTimeoutMs?: number;
  totalTimeoutMs?: number;
  /** Requests in flight at once (default WEBHOOK_CONCURRENCY). */
  concurrency?: number;
  /** Requests in flight to one endpoint (default WEBHOOK_ENDPOINT_CONCURRENCY). */
  perEndpoint?: number;
  /** Called each time a request has settled (its slot is free again). */
  onSettled?: () => void;
}

/**
 * A rolling pool of webhook requests on this node: up to `concurrency` in flight, at most
 * `perEndpoint` to one endpoint, each bounded by its own timeouts. The caps are applied when
 * deliveries are claimed (claims.ts claimDueDeliveries), so a receiver that never answers holds
 * its own slots only and its backlog stays unclaimed, due for whichever node has room for it.
 */
export interface WebhookPool {
  /**
   * Claims deliveries due at `now` as far as the free slots allow (at most `max`) and starts them;
   * returns how many it claimed. An endpoint with nothing in flight always gets one delivery, even
   * with every slot taken: no number of slow endpoints holds up a healthy one.
   */
  fill(now: Date, max?: number): Promise<number>;
  /** Requests in flight now. */
  size(): number;
  /** Resolves when a request in flight settles (at once when none is). */
  settled(): Promise<void>;
  /** Waits for every request in flight. */
  drain(): Promise<void>;
  /** What the pool has done so far. */
  counts: WebhookDeliveryCounts;
  /** The first failure of the pool itself (the database), cleared by taking it. */
  takeFailure(): unknown;
}

export function createWebhookPool(deps: PassDeps, opts: PoolOptions = {}): WebhookPool {
  const random = opts.random ?? Math.random;
  const concurrency = Math.max(1, opts.concurrency ?? deps.config.webhookConcurrency);
  const perEndpoint = Math.max(1, opts.perEndpoint ?? deps.config.webhookEndpointConcurrency);
  const post: PostOptions = {
    allowPrivate: deps.config.webhookAllowPrivate,
    resolve: deps.resolveHost,
    connectTimeoutMs: opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    totalTimeoutMs: opts.totalTimeoutMs ?? TOTAL_TIMEOUT_MS,
    monotonicMs: () => deps.clock.monotonicMs(),
  };
  const counts: WebhookDeliveryCounts = { claimed: 0, delivered: 0, retried: 0, failed: 0, disabled: 0, lost: 0 };
  const baseMs = deps.config.webhookRetryBaseSeconds * SECOND;
  const inFlight = new Set<Promise<void>>();
  const perEndpointInFlight = new Map<string, number>();
  let failure: unknown = null;

  const deliverOne = async (d: WebhookDelivery) => {
    // Read per delivery: an endpoint changed or disabled meanwhile is seen at once.
    const e = await deps.repos.webhooks.getEndpoint(d.endpointId);
    if (!e) return; // deleted meanwhile (its deliveries go with it)
    const at = deps.clock.now();
    let outcome: AttemptOutcome;
    try {
      const headers = signatureHeaders(deps, e, d, at);
      const res = await postWebhook(new URL(e.url), d.body, headers, post);
      const base = { at, responseCode: res.status, latencyMs: res.latencyMs, responseBody: res.body };
      if (res.status >= 200 && res.status < 300) outcome = { ...base, result: "delivered", nextAttemptAt: null, error: null, disable: null };
      else if (res.status === 410) outcome = { ...base, result: "failed", nextAttemptAt: null, error: "HTTP 410 Gone: the endpoint is disabled", disable: "gone" };
      else {
        const next = nextAttemptAfterFailure(d.createdAt, d.attempts + 1, at, baseMs, random);
        const error = res.status >= 300 && res.status < 400 ? `HTTP ${res.status}: redirects are not followed` : `HTTP ${res.status}`;
        outcome = { ...base, result: next ? "retry" : "failed", nextAttemptAt: next, error, disable: null };
      }
    } catch (err) {
      const next = nextAttemptAfterFailure(d.createdAt, d.attempts + 1, deps.clock.now(), baseMs, random);
      const error = (err instanceof Error ? err.message : String(err)).slice(0, MAX_ERROR_LENGTH);
      outcome = { at, result: next ? "retry" : "failed", nextAttemptAt: next, responseCode: null, latencyMs: null, responseBody: null, error, disable: null };
    }
    const admins = outcome.result === "delivered" ? [] : await adminRecipients(deps);
    const settled = await deps.db.transaction(({ repos }) =>
      settleAttempt(repos, {
        id: d.id,
        claim: d.nextAttemptAt,
        outcome,
        failureThreshold: DISABLE_AFTER_CONSECUTIVE_FAILURES,
        disableEffects: (reason) => disableEffects(deps, e, reason, admins, outcome.at),
      }),
    );
    if (!settled.settled) {
      counts.lost += 1;
      return;
    }
    if (outcome.result === "delivered") counts.delivered += 1;
    else if (outcome.result === "retry") counts.retried += 1;
    else counts.failed += 1;
    if (outcome.result !== "delivered") {
      deps.logger.warn("webhook delivery failed", { delivery_id: d.id, endpoint_id: e.id, attempts: d.attempts + 1, error: outcome.error, gave_up: outcome.result === "failed" });
    }
    if (settled.disabled) {
      counts.disabled += 1;
      deps.logger.warn("webhook endpoint disabled", { endpoint_id: e.id, reason: settled.disabled });
    }
  };

  const start = (d: WebhookDelivery) => {
    perEndpointInFlight.set(d.endpointId, (perEndpointInFlight.get(d.endpointId) ?? 0) + 1);
    const p: Promise<void> = deliverOne(d)
      .catch((e) => void (failure ??= e))
      .finally(() => {
        inFlight.delete(p);
        const left = (perEndpointInFlight.get(d.endpointId) ?? 1) - 1;
        if (left > 0) perEndpointInFlight.set(d.endpointId, left);
        else perEndpointInFlight.delete(d.endpointId);
        opts.onSettled?.();
      });
    inFlight.add(p);
  };

  const claim = async (now: Date, limit: number, cap: number) => {
    if (limit <= 0) return 0;
    const leaseUntil = new Date(deps.clock.nowMs() + DELIVERY_CLAIM_MS);
    const claimed = await claimDueDeliveries(deps.repos, { now, limit, leaseUntil, perEndpoint: cap, inFlight: perEndpointInFlight });
    counts.claimed += claimed.length;
    for (const d of claimed) start(d);
    return claimed.length;
  };

  return {
    async fill(now, max = Infinity) {
      const room = Math.min(concurrency - inFlight.size, max);
      let claimed = await claim(now, room, perEndpoint);
      // Every slot taken: endpoints with nothing in flight still get one each (their reserved slot).
      if (claimed >= room) claimed += await claim(now, Math.min(max - claimed, concurrency), 1);
      return claimed;
    },
    size: () => inFlight.size,
    settled: () => (inFlight.size === 0 ? Promise.resolve() : Promise.race(inFlight)),
    drain: async () => {
      while (inFlight.size > 0) await Promise.race(inFlight);
    },
    counts,
    takeFailure() {
      const f = failure;
      failure = null;
      return f;
    },
  };
}

/**
 * One deliver-webhooks pass (POST /admin/system/jobs/deliver-webhooks/run): sends what is due at its
 * start through a pool of its own, at most `maxPerPass` deliveries, and returns when they have all
 * settled. The delivery worker (jobs/delivery-worker.ts) runs the same pool continuously.
 */
export async function deliverWebhooks(deps: PassDeps, opts: PoolOptions & { maxPerPass?: number } = {}): Promise<WebhookDeliveryCounts> {
  const maxPerPass = opts.maxPerPass ?? DELIVERY_MAX_PER_PASS;
  const pool = createWebhookPool(deps, opts);
  const start = deps.clock.now();
  let failure: unknown = null;
  for (;;) {
    const left = maxPerPass - pool.counts.claimed;
    const claimed = failure === null && left > 0 ? await pool.fill(start, left).catch((e) => ((failure ??= e), 0)) : 0;
    if (pool.size() === 0 && claimed === 0) break;
    await pool.settled();
    failure ??= pool.takeFailure();
  }
  await pool.drain();
  failure ??= pool.takeFailure();
  if (failure !== null) throw failure;
  return pool.counts;
}
