// A local stand-in for Stripe's HTTP API (api.stripe.com is unreachable here). It answers the calls
// the official SDK makes (form-encoded bodies, `Idempotency-Key` replays as Stripe does), records
// every call for assertions, can fail chosen calls, and signs webhook events with the SDK's own
// `generateTestHeaderStringAsync`. Point the app at it with `fake.env()` (STRIPE_API_BASE).
import Stripe from "stripe";

export interface FakeStripeCall {
  method: string;
  /** Path without the query, e.g. /v1/checkout/sessions. */
  path: string;
  query: Record<string, string>;
  /** The decoded form body (nested objects and arrays, as Stripe reads `a[b][0]=v`). */
  body: Record<string, any>;
  idempotencyKey: string | null;
  /** The answer was a replay of an earlier call with the same Idempotency-Key. */
  replayed: boolean;
  status: number;
}

type Handler = (call: FakeStripeCall, fake: FakeStripe) => { status?: number; body: unknown } | Promise<{ status?: number; body: unknown }>;

interface Failure {
  method: string;
  path: RegExp;
  remaining: number;
  status: number;
  body: unknown;
}

/** Decodes Stripe's form encoding (`metadata[a]=b`, `line_items[0][price]=p`) into nested values. */
export function decodeStripeForm(text: string): Record<string, any> {
  const root: Record<string, any> = {};
  for (const [rawKey, value] of new URLSearchParams(text)) {
    const parts = rawKey.split(/\[|\]\[|\]/).filter((p, i) => i === 0 || p !== "");
    let node: any = root;
    parts.forEach((part, i) => {
      const last = i === parts.length - 1;
      const nextIsIndex = !last && /^\d+$/.test(parts[i + 1]!);
      const key = Array.isArray(node) ? Number(part) : part;
      if (last) node[key] = value;
      else node = node[key] ??= nextIsIndex ? [] : {};
    });
  }
  return root;
}

const stripeError = (status: number, message: string, code?: string) => ({
  status,
  body: { error: { type: status >= 500 ? "api_error" : "invalid_request_error", message, ...(code ? { code } : {}) } },
});

export class FakeStripe {
  readonly secretKey = "sk_test_keywardfake0000000000";
  readonly webhookSecret = "whsec_keywardfaketestsecret0000";
  readonly calls: FakeStripeCall[] = [];
  /** Objects the fake keeps, by id (checkout sessions, refunds, meter events, …). */
  readonly objects = new Map<string, any>();
  private readonly handlers = new Map<string, Handler>();
  /** Routes with an id in the path (`DELETE /v1/subscriptions/sub_…`): method, pattern, handler. */
  private readonly patternHandlers: { method: string; path: RegExp; handler: Handler }[] = [];
  private readonly failures: Failure[] = [];
  private readonly replays = new Map<string, { status: number; body: unknown; params: string }>();
  private counter = 0;
  private server: ReturnType<typeof Bun.serve> | null = null;
  /** The SDK instance used for signing (no network). */
  readonly sdk = new Stripe(this.secretKey);

  constructor() {
    this.route("POST", "/v1/checkout/sessions", (call) => {
      const id = this.nextId("cs_test");
      const session = {
        id,
        object: "checkout.session",
        mode: call.body.mode ?? "payment",
        status: "open",
        payment_status: "unpaid",
        url: `https://checkout.stripe.test/c/pay/${id}`,
        metadata: call.body.metadata ?? {},
        client_reference_id: call.body.client_reference_id ?? null,
        customer: call.body.customer ?? null,
        customer_email: call.body.customer_email ?? null,
        success_url: call.body.success_url ?? null,
        cancel_url: call.body.cancel_url ?? null,
        line_items: call.body.line_items ?? [],
        subscription_data: call.body.subscription_data ?? null,
        payment_intent_data: call.body.payment_intent_data ?? null,
        created: Math.floor(Date.now() / 1000),
      };
      this.objects.set(id, session);
      return { body: session };
    });
    this.route("POST", "/v1/refunds", (call) => {
      if (!call.body.payment_intent && !call.body.charge) return stripeError(400, "Must provide payment_intent or charge.");
      const id = this.nextId("re_test");
      const refund = {
        id,
        object: "refund",
        status: "succeeded",
        payment_intent: call.body.payment_intent ?? null,
        charge: call.body.charge ?? null,
        amount: call.body.amount ? Number(call.body.amount) : 1000,
        currency: "usd",
        metadata: call.body.metadata ?? {},
        created: Math.floor(Date.now() / 1000),
      };
      this.objects.set(id, refund);
      return { body: refund };
    });
    this.route("GET", "/v1/invoice_payments", (call) => {
      const invoice = call.query.invoice;
      // payment[type]=payment_intent&payment[payment_intent]=pi_…: the invoice payments a PaymentIntent made.
      const intent = call.query["payment[payment_intent]"];
      const data = [...this.objects.values()].filter(
        (o) => o.object === "invoice_payment" && (!invoice || o.invoice === invoice) && (!intent || o.payment?.payment_intent === intent),
      );
      return { body: { object: "list", url: "/v1/invoice_payments", has_more: false, data } };
    });
    // DELETE /v1/subscriptions/{id}: cancel now. A subscription the test planted in `objects` is
    // canceled; any other id is unknown, as at Stripe.
    this.routePattern("DELETE", /^\/v1\/subscriptions\/([^/]+)$/, (call) => {
      const id = decodeURIComponent(call.path.split("/").pop()!);
      const sub = this.objects.get(id);
      if (!sub || sub.object !== "subscription") return stripeError(404, `No such subscription: '${id}'`, "resource_missing");
      if (sub.status === "canceled") return stripeError(400, "This subscription has already been canceled.", "subscription_canceled");
      Object.assign(sub, { status: "canceled", canceled_at: Math.floor(Date.now() / 1000), ended_at: Math.floor(Date.now() / 1000) });
      return { body: sub };
    });
    this.route("POST", "/v1/billing/meter_events", (call) => {
      const identifier: string = call.body.identifier ?? this.nextId("mev");
      const duplicate = [...this.objects.values()].some((o) => o.object === "billing.meter_event" && o.identifier === identifier);
      // Stripe enforces identifier uniqueness over a rolling window of at least 24 hours.
      if (duplicate) return stripeError(400, `An event already exists with identifier ${identifier}.`, "resource_already_exists");
      const ev = {
        object: "billing.meter_event",
        created: Math.floor(Date.now() / 1000),
        event_name: call.body.event_name,
        identifier,
        livemode: false,
        payload: call.body.payload ?? {},
        timestamp: call.body.timestamp ? Number(call.body.timestamp) : Math.floor(Date.now() / 1000),
      };
      this.objects.set(`mev:${identifier}`, ev);
      return { body: ev };
    });
  }

  /** Adds or replaces the answer for `method path` (exact path, or a RegExp source starting with ^). */
  route(method: string, path: string, handler: Handler): this {
    this.handlers.set(`${method} ${path}`, handler);
    return this;
  }

  /** Adds an answer for `method` on every path matching `path` (paths with ids). */
  routePattern(method: string, path: RegExp, handler: Handler): this {
    this.patternHandlers.push({ method, path, handler });
    return this;
  }

  /** The next `times` calls of `method` on a path matching `path` answer `status` (default 500) instead. */
  failNext(method: string, path: string | RegExp, times = 1, status = 500, body?: unknown): this {
    this.failures.push({
      method,
      path: typeof path === "string" ? new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`) : path,
      remaining: times,
      status,
      body: body ?? { error: { type: "api_error", message: "Injected failure." } },
    });
    return this;
  }

  /** Every recorded call of `method path`, in order: replays (`replayed`) and injected failures (`status`) included. */
  callsTo(method: string, path: string): FakeStripeCall[] {
    return this.calls.filter((c) => c.method === method && c.path === path);
  }

  nextId(prefix: string): string {
    this.counter += 1;
    return `${prefix}_${String(this.counter).padStart(6, "0")}${Math.random().toString(36).slice(2, 8)}`;
  }

  /** Starts listening on 127.0.0.1 (ephemeral port). */
  start(): this {
    this.server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => this.handle(req) });
    return this;
  }

  get url(): string {
    if (!this.server) throw new Error("fake Stripe is not started");
    return `http://127.0.0.1:${this.server.port}`;
  }

  /** The environment that points the app at this fake. */
  env(opts: { webhookSecret?: boolean } = {}): Record<string, string> {
    return {
      STRIPE_SECRET_KEY: this.secretKey,
      STRIPE_API_BASE: this.url,
      ...(opts.webhookSecret === false ? {} : { STRIPE_WEBHOOK_SECRET: this.webhookSecret }),
    };
  }

  /**
   * A Stripe event envelope around `object` and its `Stripe-Signature` header, signed with the SDK's
   * own test helper. `secret` defaults to the fake's webhook secret (pass another to forge a bad one).
   */
  async signedEvent(
    type: string,
    object: Record<string, unknown>,
    opts: { id?: string; created?: number; secret?: string } = {},
  ): Promise<{ id: string; payload: string; signature: string }> {
    const id = opts.id ?? this.nextId("evt_test");
    const payload = JSON.stringify({
      id,
      object: "event",
      api_version: "2026-10-28.endive",
      created: opts.created ?? Math.floor(Date.now() / 1000),
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      data: { object },
    });
    const signature = await this.sdk.webhooks.generateTestHeaderStringAsync({ payload, secret: opts.secret ?? this.webhookSecret });
    return { id, payload, signature };
  }

  async stop(): Promise<void> {
    await this.server?.stop(true);
    this.server = null;
  }

  private async handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const text = req.method === "GET" || req.method === "DELETE" ? "" : await req.text();
    const call: FakeStripeCall = {
      method: req.method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body: decodeStripeForm(text),
      idempotencyKey: req.headers.get("idempotency-key"),
      replayed: false,
      status: 200,
    };
    if (req.headers.get("authorization") !== `Bearer ${this.secretKey}`) {
      call.status = 401;
      this.calls.push(call);
      return Response.json(stripeError(401, "Invalid API Key provided.").body, { status: 401 });
    }
    const replayKey = call.idempotencyKey ? `${call.method} ${call.path} ${call.idempotencyKey}` : null;
    const earlier = replayKey ? this.replays.get(replayKey) : undefined;
    if (earlier && earlier.params !== JSON.stringify(call.body)) {
      // Stripe refuses a key reused with other parameters rather than replaying the first answer.
      call.status = 400;
      this.calls.push(call);
      const refusal = stripeError(400, "Keys for idempotent requests can only be used with the same parameters they were first used with.");
      return Response.json({ error: { ...(refusal.body.error as object), type: "idempotency_error" } }, { status: 400 });
    }
    if (earlier) {
      call.replayed = true;
      call.status = earlier.status;
      this.calls.push(call);
      return Response.json(earlier.body, { status: earlier.status, headers: { "idempotent-replayed": "true" } });
    }
    const failure = this.failures.find((f) => f.remaining > 0 && f.method === call.method && f.path.test(call.path));
    if (failure) {
      failure.remaining -= 1;
      call.status = failure.status;
      this.calls.push(call);
      // Stripe does not store an idempotent result for a 5xx: a retry runs the call again.
      return Response.json(failure.body, { status: failure.status });
    }
    const handler =
      this.handlers.get(`${call.method} ${call.path}`) ??
      this.patternHandlers.find((h) => h.method === call.method && h.path.test(call.path))?.handler;
    const answer = handler ? await handler(call, this) : stripeError(404, `Unrecognized request URL (${call.method}: ${call.path}).`);
    call.status = answer.status ?? 200;
    this.calls.push(call);
    if (replayKey && call.status < 500) this.replays.set(replayKey, { status: call.status, body: answer.body, params: JSON.stringify(call.body) });
    return Response.json(answer.body, { status: call.status });
  }
}

export async function startFakeStripe(): Promise<FakeStripe> {
  return new FakeStripe().start();
}
