// Fuzz: seeded random and malformed requests against EVERY public and portal route in the app's
// route table (everything not under /api/v1/admin/, except the API docs). For each response:
// no 5xx (except the documented 503s of features this server is not configured for), and every JSON response is in the spec's envelope — {success: true, data} or
// {success: false, error: {code, message, details}}; errors are always that JSON envelope, and a
// non-JSON body (feed XML, a redirect, 204) is accepted on success only.
//
// The seed is printed; FUZZ_SEED=<n> replays it, FUZZ_CASES=<n> changes the cases per route.
import { afterAll, describe, expect, test } from "bun:test";
import { createTestApp } from "../support/app";
import { makeCatalog } from "../support/factories";
import { FuzzGen, type FuzzCase } from "./lib/fuzz-gen";
import { Rng, deriveSeed, seedFromEnv } from "./lib/prng";

const SEED = seedFromEnv("FUZZ_SEED");
const CASES = Number(process.env.FUZZ_CASES ?? 300);
console.log(`fuzz seed=${SEED} cases/route=${CASES} (replay with FUZZ_SEED=${SEED})`);

// Limits off: one address sending thousands of requests is the point here, not abuse.
const t = await createTestApp({ env: { RATE_LIMIT_PUBLIC_PER_MINUTE: "1000000", BF_MAX_FAILS: "1000" } });
afterAll(() => t.close());
const catalog = await makeCatalog(t.deps, { maxActivations: 100 }, [
  { name: "seats", valueType: "quota", value: "", quotaLimit: 1000, quotaPeriod: "monthly" },
]);

const ROUTES = [
  ...new Set(
    (await t.app.routes())
      .filter((r) => !r.path.startsWith("/api/v1/admin/") && !/\/(docs|openapi)(\/|\.json|$)/.test(r.path))
      .map((r) => `${r.method} ${r.path}`),
  ),
];

interface Failure {
  index: number;
  problem: string;
  request: string;
}

function describeCase(c: FuzzCase): string {
  const body = c.body ? ` body(${c.kind}, ${c.body.byteLength} B): ${new TextDecoder().decode(c.body.slice(0, 120))}` : "";
  return `${c.method} ${c.url.slice(0, 200)} headers=${JSON.stringify(c.headers).slice(0, 300)}${body}`;
}

const isPlainObject = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Routes whose success body is a document its own format defines rather than the envelope
 * (spec: design rule 3): feed.json is a bare JSON array. Their errors are still enveloped.
 */
const UNENVELOPED_SUCCESS = [/\/feed\.json$/];

/**
 * 503 answers the spec (or the docs) define for a feature this server is not configured for: the
 * route answered, nothing crashed. The fuzzed app has no Stripe, so payment routes say so.
 */
const CONFIGURATION_503 = new Set(["RENEWAL_NOT_AVAILABLE", "PURCHASE_NOT_AVAILABLE", "PAYMENTS_NOT_CONFIGURED", "STORAGE_DISABLED"]);

function configuration503(res: Response, text: string): boolean {
  if (res.status !== 503) return false;
  try {
    return CONFIGURATION_503.has(JSON.parse(text)?.error?.code);
  } catch {
    return false;
  }
}

/** Returns what is wrong with the response, or null. */
function checkResponse(res: Response, text: string, path: string): string | null {
  if (res.status >= 500 && !configuration503(res, text)) return `HTTP ${res.status}: ${text.slice(0, 300)}`;
  const type = res.headers.get("content-type") ?? "";
  const isJson = /^application\/(.+\+)?json/i.test(type);
  if (res.status >= 400 && !isJson) return `HTTP ${res.status} error with content-type "${type}" (errors must be the JSON envelope)`;
  if (!isJson) return null; // feed XML, redirect, 204: success only (checked above)
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return `HTTP ${res.status} content-type JSON but the body does not parse: ${text.slice(0, 200)}`;
  }
  if (res.status < 400 && UNENVELOPED_SUCCESS.some((r) => r.test(path))) {
    return Array.isArray(body) ? null : `HTTP ${res.status} feed.json body is not an array: ${text.slice(0, 200)}`;
  }
  if (!isPlainObject(body)) return `HTTP ${res.status} body is not an object`;
  const keys = Object.keys(body).sort().join(",");
  if (res.status >= 400) {
    if (keys !== "error,success" || body.success !== false) return `HTTP ${res.status} not an error envelope: ${text.slice(0, 200)}`;
    const e = body.error;
    if (!isPlainObject(e) || Object.keys(e).sort().join(",") !== "code,details,message") return `error object shape: ${text.slice(0, 200)}`;
    if (typeof e.code !== "string" || !/^[A-Z][A-Z0-9_]*$/.test(e.code)) return `error.code ${JSON.stringify(e.code)}`;
    if (typeof e.message !== "string" || e.message.length === 0) return `error.message ${JSON.stringify(e.message)}`;
    if (e.details !== null && !isPlainObject(e.details)) return `error.details ${JSON.stringify(e.details)}`;
    return null;
  }
  if (keys !== "data,success" || body.success !== true) return `HTTP ${res.status} not a success envelope: ${text.slice(0, 200)}`;
  return null;
}

describe("fuzz public and portal routes", () => {
  test("the route table has public routes to fuzz", () => {
    expect(ROUTES.length).toBeGreaterThan(0);
    console.log(`fuzzing ${ROUTES.length} routes: ${ROUTES.join(", ")}`);
  });

  for (const route of ROUTES) {
    test(
      route,
      async () => {
        const [method, path] = route.split(" ") as [string, string];
        const gen = new FuzzGen(new Rng(deriveSeed(SEED, route)), {
          licenseKey: catalog.key,
          productSlug: catalog.product.slug,
          ids: [catalog.product.id, catalog.plan.id, catalog.license.id],
        });
        const failures: Failure[] = [];
        for (let i = 0; i < CASES; i++) {
          const c = gen.request(method, path);
          const req = new Request(`http://localhost${c.url}`, { method: c.method, headers: c.headers, body: c.body });
          let problem: string | null;
          try {
            const res = await t.app.handle(req);
            problem = checkResponse(res, await res.text(), path);
          } catch (e) {
            problem = `threw instead of answering: ${(e as Error).stack ?? e}`;
          }
          if (problem) failures.push({ index: i, problem, request: describeCase(c) });
        }
        if (failures.length) {
          console.log(`\n${route}: ${failures.length}/${CASES} failing cases (FUZZ_SEED=${SEED}); first ones:`);
          for (const f of failures.slice(0, 5)) console.log(`  #${f.index} ${f.problem}\n     ${f.request}`);
        }
        expect(failures.map((f) => `#${f.index} ${f.problem}`).slice(0, 5)).toEqual([]);
      },
      20_000,
    );
  }
});
