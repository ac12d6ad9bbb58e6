// Hostile request bodies (issue 8, points 1, 2 and 8): nesting bombs, bodies of unbounded length
// without Content-Length, invalid UTF-8 and lone surrogates. Each gets a 4xx in the envelope, and
// the expensive work (buffering the whole body, parsing and validating a deep tree) is never done.
import { afterAll, describe, expect, spyOn, test } from "bun:test";
import { createTestApp } from "../../support/app";
import { catalog } from "../../support/license-api";
import { MAX_JSON_DEPTH, MAX_JSON_NODES } from "../../../src/http/json-limits";

const t = await createTestApp();
afterAll(() => t.close());
const MAX_BODY = t.deps.config.maxBodyBytes;

const nested = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

async function post(path: string, body: NonNullable<RequestInit["body"]>, headers: Record<string, string> = {}) {
  const res = await t.app.handle(
    new Request(`http://localhost/api/v1${path}`, { method: "POST", body, headers: { "content-type": "application/json", ...headers } }),
  );
  return { status: res.status, body: (await res.json()) as any };
}

/** A chunked body (no Content-Length) of `total` bytes, produced lazily; `pulled` counts what was read. */
function lazyBody(total: number, chunk = 64 * 1024) {
  const counter = { pulled: 0 };
  const bytes = new Uint8Array(chunk).fill(0x20);
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (counter.pulled >= total) return controller.close();
      counter.pulled += chunk;
      controller.enqueue(bytes);
    },
  });
  return { stream, counter };
}

describe("nesting depth and value count (point 1)", () => {
  const bodies: [string, string][] = [
    ["/license/verify", `{"license_key":"x","identifier":${nested(20_000)}}`],
    ["/license/verify", `{"license_key":"x","identifier":${nested(60_000)}}`],
    ["/license/usage", `{"license_key":"x","feature":"f","metadata":${nested(60_000)}}`],
    ["/license/activate", `{"license_key":"x","identifier":${"[".repeat(100_000)}${"]".repeat(100_000)}}`],
  ];

  for (const [path, body] of bodies) {
    test(`${path}: ${body.length} bytes nested past ${MAX_JSON_DEPTH} levels → 400 VALIDATION_ERROR, never parsed`, async () => {
      const parse = spyOn(JSON, "parse");
      try {
        const res = await post(path, body);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe("VALIDATION_ERROR");
        expect(res.body.error.details.fields.body).toContain(`${MAX_JSON_DEPTH} levels`);
        // Structural: the deep text never reached JSON.parse (nor, so, validation).
        expect(parse.mock.calls.some(([text]) => typeof text === "string" && text.length >= body.length)).toBe(false);
      } finally {
        parse.mockRestore();
      }
    });
  }

  test("the refusal is fast: the fastest of five 20,000-deep verifies is under 50 ms", async () => {
    const body = `{"license_key":"x","identifier":${nested(20_000)}}`;
    let fastest = Infinity;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      expect((await post("/license/verify", body)).status).toBe(400);
      fastest = Math.min(fastest, performance.now() - t0);
    }
    expect(fastest).toBeLessThan(50);
  });

  test(`more than ${MAX_JSON_NODES} values → 400 naming the body`, async () => {
    const res = await post("/license/usage", JSON.stringify({ license_key: "x", feature: "f", metadata: { a: new Array(MAX_JSON_NODES + 1).fill(0) } }));
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields.body).toContain(String(MAX_JSON_NODES));
  });

  test("a body within the limits still works (usage metadata a few levels deep)", async () => {
    const { key } = await catalog(t, {}, [{ name: "api", valueType: "quota", value: "10", quotaLimit: 10, quotaPeriod: null }]);
    const res = await post("/license/usage", JSON.stringify({ license_key: key, feature: "api", metadata: { a: { b: { c: [1, [2]] } } } }));
    expect(res.status).toBe(200);
  });
});

describe("body size without Content-Length (point 2)", () => {
  for (const path of ["/admin/products", "/license/verify", "/license/usage"]) {
    test(`${path}: a 1 GiB chunked body → 413 PAYLOAD_TOO_LARGE after reading about MAX_BODY_BYTES`, async () => {
      const { stream, counter } = lazyBody(1024 ** 3);
      const res = await post(path, stream);
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe("PAYLOAD_TOO_LARGE");
      // Structural: reading stopped at the limit (plus the chunk that crossed it and the stream's read-ahead).
      expect(counter.pulled).toBeLessThanOrEqual(MAX_BODY + 4 * 64 * 1024);
    });
  }

  test("a chunked body within the limit is read whole and parsed", async () => {
    const product = JSON.stringify({ name: "Chunked", slug: "chunked-body" });
    const bytes = new TextEncoder().encode(product);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 7) c.enqueue(bytes.slice(i, i + 7));
        c.close();
      },
    });
    const res = await post("/admin/products", stream, { authorization: `Bearer ${t.adminKey}` });
    expect(res.status).toBe(201);
    expect(res.body.data.slug).toBe("chunked-body");
  });

  test("a declared Content-Length over the limit → 413 without reading", async () => {
    const res = await post("/license/verify", "{}", { "content-length": String(MAX_BODY + 1) });
    expect(res.status).toBe(413);
  });
});

describe("text that is not Unicode (point 8)", () => {
  test("invalid UTF-8 → 400, not silently replaced by U+FFFD", async () => {
    const head = new TextEncoder().encode('{"license_key":"x","identifier":"dev');
    const res = await post("/license/verify", new Uint8Array([...head, 0xed, 0xa0, 0x80, 0x22, 0x7d]));
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields.body).toBe("invalid UTF-8");
  });

  test("an identifier with a lone surrogate escape → 400 naming it; no activation stored", async () => {
    const { key, license } = await catalog(t);
    for (const id of ["dev\\ud800", "\\udfffdev"]) {
      const res = await post("/license/activate", `{"license_key":"${key}","identifier":"${id}"}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
      expect(Object.keys(res.body.error.details.fields)).toEqual(["identifier"]);
    }
    expect(await t.deps.repos.activations.listByLicense(license.id)).toEqual([]);
    // A real astral character (a surrogate pair) is an ordinary identifier.
    expect((await post("/license/activate", `{"license_key":"${key}","identifier":"dev\\ud83d\\ude00"}`)).status).toBe(200);
  });
});
