// The ONE place that knows Keyward's wire format for the benches and reliability tests: paths, request
// field names and where each response keeps the values we need. Every bench, Lua body file and test
// goes through this module, so a renamed field or route is a one-line change here.
//
// Transport-agnostic: `fetchTransport(baseUrl)` talks to a listening server (benches, crash test),
// `handleTransport(app)` calls `app.handle()` in-process (fuzz and secrets tests).

export const API = "/api/v1";

/** Every path the harness uses (spec: Endpoints; releases per the releases brief). */
export const ROUTES = {
  health: `${API}/health`,
  openapi: `${API}/openapi.json`,
  pubkey: `${API}/license/pubkey`,
  activate: `${API}/license/activate`,
  verify: `${API}/license/verify`,
  deactivate: `${API}/license/deactivate`,
  usage: `${API}/license/usage`,
  invitesAccept: `${API}/invites/accept`,
  adminProducts: `${API}/admin/products`,
  adminPlans: `${API}/admin/plans`,
  adminLicenses: `${API}/admin/licenses`,
  adminLicenseAction: (id: string, action: "revoke" | "suspend" | "reinstate") => `${API}/admin/licenses/${id}/${action}`,
  adminApiKeys: `${API}/admin/api-keys`,
  adminRotateSigningKey: `${API}/admin/signing-keys/rotate`,
  productReleases: (productId: string) => `${API}/admin/products/${productId}/releases`,
  releaseArtifacts: (releaseId: string) => `${API}/admin/releases/${releaseId}/artifacts`,
  artifactFinalize: (artifactId: string) => `${API}/admin/artifacts/${artifactId}/finalize`,
  releasePublish: (releaseId: string) => `${API}/admin/releases/${releaseId}/publish`,
  feedXml: (slug: string, platform: string, limit: number) =>
    `${API}/releases/${encodeURIComponent(slug)}/feed.xml?platform=${encodeURIComponent(platform)}&limit=${limit}`,
} as const;

/**
 * Route templates as the OpenAPI document and Elysia's route table spell them, used to decide whether
 * a feature is present (a bench prints "SKIPPED (route missing)" instead of crashing).
 */
export const ROUTE_TEMPLATES = {
  activate: ["POST", `${API}/license/activate`],
  verify: ["POST", `${API}/license/verify`],
  deactivate: ["POST", `${API}/license/deactivate`],
  usage: ["POST", `${API}/license/usage`],
  invitesAccept: ["POST", `${API}/invites/accept`],
  adminPlans: ["POST", `${API}/admin/plans`],
  adminLicenses: ["POST", `${API}/admin/licenses`],
  licenseSuspend: ["POST", `${API}/admin/licenses/:id/suspend`],
  licenseRevoke: ["POST", `${API}/admin/licenses/:id/revoke`],
  productReleases: ["POST", `${API}/admin/products/:id/releases`],
  releaseArtifacts: ["POST", `${API}/admin/releases/:id/artifacts`],
  artifactFinalize: ["POST", `${API}/admin/artifacts/:id/finalize`],
  releasePublish: ["POST", `${API}/admin/releases/:id/publish`],
  feedXml: ["GET", `${API}/releases/:slug/feed.xml`],
} as const satisfies Record<string, readonly [string, string]>;
export type RouteName = keyof typeof ROUTE_TEMPLATES;

/** The message src/http/error-handler.ts gives the router's 404 (no route), as opposed to a missing resource. */
export const ROUTER_NOT_FOUND_MESSAGE = "No route matches this request.";

/** Request bodies of the public SDK routes (spec: License endpoints). Lua body files are built from these. */
export const wire = {
  activateBody: (licenseKey: string, identifier: string, opts: { identifierType?: "device" | "user"; label?: string } = {}) => ({
    license_key: licenseKey,
    identifier,
    ...(opts.identifierType ? { identifier_type: opts.identifierType } : {}),
    ...(opts.label ? { label: opts.label } : {}),
  }),
  verifyBody: (licenseKey: string, identifier: string) => ({ license_key: licenseKey, identifier }),
  deactivateBody: (licenseKey: string, identifier: string) => ({ license_key: licenseKey, identifier }),
  usageBody: (licenseKey: string, feature: string, quantity = 1) => ({ license_key: licenseKey, feature, quantity }),
  inviteAcceptBody: (token: string) => ({ token }),
  /** The field of the verify body that carries the license key (the floor server reads it). */
  licenseKeyField: "license_key" as const,
  identifierField: "identifier" as const,
};

/** Readers for response payloads (`data` of the envelope). */
export const read = {
  id: (data: any): string => str(data?.id, "data.id"),
  licenseKey: (data: any): string => str(data?.license_key ?? data?.key, "data.license_key"),
  apiKey: (data: any): string => str(data?.key, "data.key"),
  activation: (data: any) => ({
    status: str(data?.status, "data.status") as "activated" | "already_activated",
    licenseId: str(data?.license_id, "data.license_id"),
    token: str(data?.token, "data.token"),
  }),
  verification: (data: any) => ({ status: str(data?.status, "data.status"), token: str(data?.token, "data.token") }),
  usage: (data: any) => ({
    accepted: Boolean(data?.accepted),
    used: num(data?.used, "data.used"),
    limit: data?.limit === null ? null : num(data?.limit, "data.limit"),
    remaining: data?.remaining === null ? null : num(data?.remaining, "data.remaining"),
  }),
  /** 429 QUOTA_EXCEEDED details (spec: "details include used, limit, period"). */
  quotaExceeded: (error: any) => ({ used: num(error?.details?.used, "error.details.used"), limit: num(error?.details?.limit, "error.details.limit") }),
  upload: (data: any) => {
    const u = data?.upload ?? data;
    return {
      url: str(u?.url, "data.upload.url"),
      method: typeof u?.method === "string" ? (u.method as string) : "PUT",
      headers: (u?.headers ?? {}) as Record<string, string>,
    };
  },
  sha256: (data: any): string => str(data?.sha256, "data.sha256"),
  /** Signed token claims (DECISIONS: Signed token): `lid` license id, `idn` identifier. */
  tokenClaims: (token: string): { lid: string; idn: string } & Record<string, unknown> => {
    const payload = token.split(".")[0] ?? "";
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    return { ...claims, lid: str(claims.lid, "token.lid"), idn: str(claims.idn, "token.idn") };
  },
};

function str(v: unknown, where: string): string {
  if (typeof v !== "string") throw new WireError(`expected a string at ${where}, got ${JSON.stringify(v)}`);
  return v;
}
function num(v: unknown, where: string): number {
  if (typeof v !== "number") throw new WireError(`expected a number at ${where}, got ${JSON.stringify(v)}`);
  return v;
}

export class WireError extends Error {
  override name = "WireError";
}

// ---------------------------------------------------------------------------------------------
// Transport

/** Raw request bytes (a file, a buffer, a stream). */
export type RawBody = NonNullable<RequestInit["body"]>;

export interface ApiRequest {
  method: string;
  /** A path (`/api/v1/...`) or an absolute URL (upload URLs). */
  path: string;
  /** JSON-encoded unless `raw` is given. */
  body?: unknown;
  /** Sent as-is (bytes, a file, a stream). */
  raw?: RawBody;
  headers?: Record<string, string>;
  /** Bearer key; null for none. */
  key?: string | null;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or null when the body is not JSON. */
  json: any;
  text: string;
}

export type Transport = (req: ApiRequest) => Promise<ApiResponse>;

function buildInit(req: ApiRequest): RequestInit {
  const headers: Record<string, string> = { ...req.headers };
  if (req.key) headers.authorization = `Bearer ${req.key}`;
  let body: RawBody | undefined = req.raw;
  if (body === undefined && req.body !== undefined) {
    body = JSON.stringify(req.body);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
  }
  return { method: req.method, headers, body };
}

async function toApiResponse(res: Response): Promise<ApiResponse> {
  const text = await res.text();
  let json: any = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  return { status: res.status, headers: res.headers, json, text };
}

export function fetchTransport(baseUrl: string): Transport {
  const base = baseUrl.replace(/\/+$/, "");
  return async (req) => {
    const url = /^https?:\/\//.test(req.path) ? req.path : `${base}${req.path}`;
    return toApiResponse(await fetch(url, { ...buildInit(req), redirect: "manual" }));
  };
}

/** In-process: `app.handle()`. Absolute URLs (uploads) are re-rooted on http://localhost (STYLE: Known traps). */
export function handleTransport(app: { handle(request: Request): Promise<Response> | Response }): Transport {
  return async (req) => {
    const path = /^https?:\/\//.test(req.path) ? new URL(req.path).pathname + new URL(req.path).search : req.path;
    return toApiResponse(await app.handle(new Request(`http://localhost${path}`, buildInit(req))));
  };
}

// ---------------------------------------------------------------------------------------------
// Client

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly what: string,
    readonly response: ApiResponse,
  ) {
    super(`${what}: HTTP ${response.status} ${response.text.slice(0, 500)}`);
  }
  get code(): string | undefined {
    return this.response.json?.error?.code;
  }
}

/** The spec's error envelope code, when the response is one. */
export function errorCode(res: ApiResponse): string | undefined {
  return res.json?.success === false ? res.json?.error?.code : undefined;
}

export interface PlanFeatureInput {
  name: string;
  quotaLimit: number;
  quotaPeriod?: "hourly" | "daily" | "monthly" | "yearly";
}

export class KeywardClient {
  constructor(
    readonly transport: Transport,
    readonly adminKey: string | null = null,
  ) {}

  /** Any request; the admin key is sent for /admin/ paths unless `key` is given. */
  send(req: ApiRequest): Promise<ApiResponse> {
    const key = req.key !== undefined ? req.key : req.path.includes("/admin/") ? this.adminKey : null;
    return this.transport({ ...req, key });
  }

  private async expect(what: string, req: ApiRequest, ok: number[] = [200, 201]): Promise<any> {
    const res = await this.send(req);
    if (!ok.includes(res.status) || res.json?.success !== true) throw new ApiError(what, res);
    return res.json.data;
  }

  // --- discovery -------------------------------------------------------------------------

  /** Route templates the server serves, from its OpenAPI document (`{id}` → `:id`). */
  async routeTable(): Promise<Set<string>> {
    const res = await this.send({ method: "GET", path: ROUTES.openapi });
    if (res.status !== 200 || !res.json?.paths) throw new ApiError("openapi document", res);
    const out = new Set<string>();
    for (const [path, ops] of Object.entries(res.json.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(ops)) out.add(`${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ":$1")}`);
    }
    return out;
  }

  /**
   * Names of the routes in `names` that the server does not serve. The OpenAPI document answers
   * first; a route absent from it (the docs plugin leaves out some paths, e.g. `feed.xml`) is probed
   * with a dummy request: only the router's own 404 ("No route matches") means it is missing.
   */
  async missingRoutes(names: RouteName[]): Promise<RouteName[]> {
    const notDocumented = missingFromTable(await this.routeTable(), names);
    const missing: RouteName[] = [];
    for (const name of notDocumented) {
      const [method, template] = ROUTE_TEMPLATES[name];
      const path = template.replace(/:[^/]+/g, "00000000-0000-0000-0000-000000000000");
      const res = await this.send({ method, path, ...(method === "GET" ? {} : { body: {} }) });
      if (res.status === 404 && errorCode(res) === "NOT_FOUND" && res.json?.error?.message === ROUTER_NOT_FOUND_MESSAGE) missing.push(name);
    }
    return missing;
  }

  async health(): Promise<ApiResponse> {
    return this.send({ method: "GET", path: ROUTES.health });
  }

  // --- admin: catalog --------------------------------------------------------------------

  async createProduct(input: { name: string; slug: string; distribution?: "open" | "licensed" }): Promise<{ id: string; slug: string }> {
    const data = await this.expect("create product", { method: "POST", path: ROUTES.adminProducts, body: input });
    return { id: read.id(data), slug: input.slug };
  }

  async createPlan(input: {
    productId: string;
    name: string;
    maxActivations: number | null;
    features?: PlanFeatureInput[];
  }): Promise<{ id: string }> {
    const body: Record<string, unknown> = {
      product_id: input.productId,
      name: input.name,
      license_type: "perpetual",
      max_activations: input.maxActivations,
    };
    if (input.features?.length) {
      body.features = input.features.map((f) => ({
        name: f.name,
        value_type: "quota",
        quota_limit: f.quotaLimit,
        ...(f.quotaPeriod ? { quota_period: f.quotaPeriod } : {}),
      }));
    }
    const data = await this.expect("create plan", { method: "POST", path: ROUTES.adminPlans, body });
    return { id: read.id(data) };
  }

  async createLicense(input: { productId: string; planId: string; email: string }): Promise<{ id: string; key: string }> {
    const data = await this.expect("create license", {
      method: "POST",
      path: ROUTES.adminLicenses,
      body: { product_id: input.productId, plan_id: input.planId, email: input.email },
    });
    return { id: read.id(data), key: read.licenseKey(data) };
  }

  async licenseAction(licenseId: string, action: "revoke" | "suspend" | "reinstate"): Promise<void> {
    await this.expect(`${action} license`, { method: "POST", path: ROUTES.adminLicenseAction(licenseId, action), body: {} });
  }

  async createApiKey(input: { name: string; scopes: string[] }): Promise<string> {
    return read.apiKey(await this.expect("create API key", { method: "POST", path: ROUTES.adminApiKeys, body: input }));
  }

  async rotateSigningKey(): Promise<void> {
    await this.expect("rotate signing key", { method: "POST", path: ROUTES.adminRotateSigningKey });
  }

  // --- public SDK routes (raw: callers look at status codes) ------------------------------

  activate(licenseKey: string, identifier: string, headers?: Record<string, string>): Promise<ApiResponse> {
    return this.send({ method: "POST", path: ROUTES.activate, body: wire.activateBody(licenseKey, identifier), headers, key: null });
  }
  verify(licenseKey: string, identifier: string): Promise<ApiResponse> {
    return this.send({ method: "POST", path: ROUTES.verify, body: wire.verifyBody(licenseKey, identifier), key: null });
  }
  deactivate(licenseKey: string, identifier: string): Promise<ApiResponse> {
    return this.send({ method: "POST", path: ROUTES.deactivate, body: wire.deactivateBody(licenseKey, identifier), key: null });
  }
  usage(licenseKey: string, feature: string, quantity = 1, headers?: Record<string, string>): Promise<ApiResponse> {
    return this.send({ method: "POST", path: ROUTES.usage, body: wire.usageBody(licenseKey, feature, quantity), headers, key: null });
  }
  acceptInvite(token: string): Promise<ApiResponse> {
    return this.send({ method: "POST", path: ROUTES.invitesAccept, body: wire.inviteAcceptBody(token), key: null });
  }

  /** Activation that must succeed (setup). */
  async activateOk(licenseKey: string, identifier: string) {
    const res = await this.activate(licenseKey, identifier);
    if (res.status !== 200 || res.json?.success !== true) throw new ApiError("activate", res);
    return read.activation(res.json.data);
  }

  /**
   * The current counter of a quota feature, read through the API: one more unit is recorded (and
   * subtracted here) or, when the quota is full, the 429 QUOTA_EXCEEDED details are read.
   */
  async usageCounter(licenseKey: string, feature: string): Promise<{ used: number; limit: number | null; probeAccepted: boolean }> {
    const res = await this.usage(licenseKey, feature, 1);
    if (res.status === 200 && res.json?.success) {
      const u = read.usage(res.json.data);
      return { used: u.used - 1, limit: u.limit, probeAccepted: true };
    }
    if (res.status === 429 && errorCode(res) === "QUOTA_EXCEEDED") {
      const q = read.quotaExceeded(res.json.error);
      return { used: q.used, limit: q.limit, probeAccepted: false };
    }
    throw new ApiError("usage probe", res);
  }

  // --- releases ---------------------------------------------------------------------------

  async createRelease(productId: string, input: { version: string; channel: string; notes?: string }): Promise<{ id: string }> {
    return { id: read.id(await this.expect("create release", { method: "POST", path: ROUTES.productReleases(productId), body: input })) };
  }

  async createArtifact(
    releaseId: string,
    input: { platform: string; filename: string; contentType: string; size: number },
  ): Promise<{ id: string; upload: { url: string; method: string; headers: Record<string, string> } }> {
    const data = await this.expect("create artifact", {
      method: "POST",
      path: ROUTES.releaseArtifacts(releaseId),
      body: { platform: input.platform, filename: input.filename, content_type: input.contentType, size: input.size },
    });
    return { id: read.id(data?.artifact), upload: read.upload(data) };
  }

  /** PUT the bytes to the presigned URL the artifact call returned (no admin key: the URL is the credential). */
  async upload(upload: { url: string; method: string; headers: Record<string, string> }, bytes: RawBody): Promise<void> {
    const res = await this.send({ method: upload.method, path: upload.url, raw: bytes, headers: upload.headers, key: null });
    if (res.status < 200 || res.status >= 300) throw new ApiError("upload artifact", res);
  }

  async finalizeArtifact(artifactId: string): Promise<{ sha256: string }> {
    return { sha256: read.sha256(await this.expect("finalize artifact", { method: "POST", path: ROUTES.artifactFinalize(artifactId), body: {} })) };
  }

  async publishRelease(releaseId: string): Promise<void> {
    await this.expect("publish release", { method: "POST", path: ROUTES.releasePublish(releaseId), body: {} });
  }

  /** Release + one artifact + upload + finalize + publish: the whole admin workflow for one version. */
  async publishSmallRelease(productId: string, version: string, platform: string, bytes: Uint8Array): Promise<void> {
    const release = await this.createRelease(productId, { version, channel: "stable" });
    const artifact = await this.createArtifact(release.id, {
      platform,
      filename: `app-${version}-${platform}.tar.gz`,
      contentType: "application/gzip",
      size: bytes.byteLength,
    });
    await this.upload(artifact.upload, bytes);
    await this.finalizeArtifact(artifact.id);
    await this.publishRelease(release.id);
  }

  feedXml(slug: string, platform: string, limit: number): Promise<ApiResponse> {
    return this.send({ method: "GET", path: ROUTES.feedXml(slug, platform, limit), key: null });
  }
}

/** The names whose route is absent from `table` ("METHOD /path/:param" entries; param names are ignored). */
export function missingFromTable(table: Iterable<string>, names: RouteName[]): RouteName[] {
  const normalize = (route: string) => route.replace(/:[^/]+/g, ":p");
  const have = new Set([...table].map(normalize));
  return names.filter((n) => {
    const [method, path] = ROUTE_TEMPLATES[n];
    return !have.has(normalize(`${method} ${path}`));
  });
}
