// The verify ladder (bun bench/verify.ts --ladder): Keyward's own verify, served by a bare Bun.serve
// route, with the layers of the HTTP contract that every public request carries added one at a
// time. Each step is a separate process on the same SQLite file as a running Keyward (same
// environment, same keys), so the bench can place every step between the floor server and Keyward
// itself and show where the distance between them goes.
//
//   bun bench/verify-ladder-server.ts --port 9002 --layers 3    (environment of a Keyward process)
//
// Layers, cumulative (--layers N runs the first N):
//   0  service      verify(), presentVerify(), the envelope, Response.json: nothing around it
//   1  address      the client address (server.requestIP: one getpeername per request) and the
//                   per-address public rate limit, as app.ts decides them
//   2  request-id   the request context and its X-Request-Id response header
//   3  strict-body  the strict JSON body reader (size bound, content type, UTF-8, shape) in place of
//                   request.json()
//   4  schemas      the route's body and response schemas, checked by Elysia's own validators
// What Keyward adds beyond layer 4 is the lane's generic route machinery (http/lane.ts) and the
// hooks being Elysia hooks. The steps are measurements only: Keyward never serves through this file.
import { getResponseSchemaValidator, getSchemaValidator } from "elysia";
import { configFromProcessEnv } from "../src/config";
import { createDeps } from "../src/container";
import { systemClock } from "../src/shared/clock";
import { createLogger } from "../src/shared/logger";
import { verify } from "../src/modules/activations/service";
import { presentVerify } from "../src/modules/activations/present";
import { activationModels, VerifyResponse } from "../src/modules/activations/model";
import { Envelope, ok } from "../src/http/envelope";
import { beginRequest, clientIp, NO_PEER } from "../src/http/request-context";
import { clientAddressResolver } from "../src/http/trusted-proxies";
import { rateLimitCheck } from "../src/http/rate-limit";
import { readJsonBody } from "../src/http/body";
import { API_PREFIX } from "../src/app";
// The app registers its uuid format check this way; the schemas below use it.
import "../src/http/formats";

const LADDER_LAYERS = ["service", "address", "request-id", "strict-body", "schemas"];

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const layers = Number(arg("--layers") ?? 0);
const port = Number(arg("--port") ?? 0);
const config = configFromProcessEnv();
const clock = systemClock;
const deps = await createDeps(config, clock, createLogger("warn", undefined, () => clock.now()));

const address = layers >= 1;
const requestId = layers >= 2;
const strictBody = layers >= 3;
const schemas = layers >= 4;

const resolveClient = clientAddressResolver(config.trustProxy, NO_PEER);
const rateLimits = rateLimitCheck(deps.rateLimiter, clock, [
  { bucket: "public", perMinute: config.rateLimitPublicPerMinute, prefixes: [`${API_PREFIX}/license/`] },
]);
// As the app builds them (Elysia aot: compiled validators, not the dynamic checker).
const options = { normalize: false, dynamic: false } as NonNullable<Parameters<typeof getSchemaValidator>[1]> &
  NonNullable<Parameters<typeof getResponseSchemaValidator>[1]>;
const bodyCheck = getSchemaValidator(activationModels(config.identifierMaxLength).VerifyBody, options) as unknown as { Check(v: unknown): boolean };
const responseCheck = (getResponseSchemaValidator({ 200: Envelope(VerifyResponse) }, options) as unknown as Record<number, { Check(v: unknown): boolean }>)[200]!;

const PATH = `${API_PREFIX}/license/verify`;
const fail = (status: number, code: string) => Response.json({ success: false, error: { code, message: code, details: null } }, { status });

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  routes: {
    [`${API_PREFIX}/health`]: () => Response.json({ success: true, data: { status: "ok" } }),
    [PATH]: {
      async POST(request) {
        let id: string | null = null;
        if (address) {
          const ip = clientIp(request, server, resolveClient);
          if (requestId) id = beginRequest(request, ip, clock.monotonicMs()).requestId;
          let refusal = rateLimits(request, PATH, ip);
          if (refusal instanceof Promise) refusal = await refusal;
          if (refusal) return refusal;
        }
        let body: { license_key: string; product_id?: string; identifier: string };
        try {
          body = (await (strictBody ? readJsonBody(request, request.headers.get("content-type") ?? undefined, config.maxBodyBytes) : request.json())) as typeof body;
        } catch {
          return fail(400, "VALIDATION_ERROR");
        }
        if (schemas && !bodyCheck.Check(body)) return fail(422, "VALIDATION_ERROR");
        let out: unknown;
        try {
          out = ok(presentVerify(await verify(deps, { licenseKey: body.license_key, productId: body.product_id, identifier: body.identifier })));
        } catch {
          return fail(404, "LICENSE_NOT_FOUND");
        }
        if (schemas && !responseCheck.Check(out)) return fail(500, "INTERNAL");
        const response = Response.json(out);
        if (id !== null) response.headers.set("x-request-id", id);
        return response;
      },
    },
  },
  fetch: () => fail(404, "NOT_FOUND"),
});

console.log(`verify ladder step ${layers} (${LADDER_LAYERS.slice(0, layers + 1).join(" + ")}) on ${server.url}`);

const shutdown = async () => {
  await server.stop(true);
  await deps.db.close();
  process.exit(0);
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
