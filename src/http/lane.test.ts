// The lane's own rules, on small Elysia apps (test/http/lane.test.ts compares it with Elysia on the
// real app's routes): what it refuses to serve, and each step of a route's lifecycle.
import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { t } from "./schema";
import { createLane } from "./lane";

const post = (path: string, body: unknown, headers: Record<string, string> = { "content-type": "application/json" }) =>
  new Request(`http://localhost${path}`, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });

/** An app with the kinds of hook the lane runs: request, parse, error, after-response. */
function app(log: string[] = []) {
  return new Elysia({ normalize: false })
    .onRequest(({ request, set }) => {
      set.headers["x-request-id"] = "rid";
      log.push("request");
      if (request.headers.get("x-refuse")) return new Response("refused", { status: 429 });
    })
    .onParse({ as: "global" }, async ({ request }) => {
      log.push("parse");
      const text = await request.text();
      if (text === "boom") throw new Error("unparseable");
      return JSON.parse(text);
    })
    .onError({ as: "global" }, ({ code, error }) => {
      log.push(`error:${String(code)}`);
      return Response.json({ code, message: (error as Error).message }, { status: code === "VALIDATION" ? 400 : 500 });
    })
    .onAfterResponse({ as: "global" }, ({ set }) => {
      log.push(`after:${set.status}`);
    });
}

describe("createLane refuses what it would not run", () => {
  const cases: [string, Elysia<any, any, any, any, any, any, any>][] = [
    ["beforeHandle", app().post("/r", () => ({}), { body: t.Object({}), beforeHandle: () => undefined })],
    ["transform", app().post("/r", () => ({}), { body: t.Object({}), transform: () => undefined })],
    ["query", app().post("/r", () => ({}), { body: t.Object({}), query: t.Object({ q: t.String() }) })],
    ["derive", app().derive(() => ({ x: 1 })).post("/r", () => ({}), { body: t.Object({}) })],
  ];
  for (const [what, a] of cases) {
    test(`a route with ${what}`, () => {
      expect(() => createLane(a, ["/r"])).toThrow(/lane: POST \/r/);
    });
  }

  test("a body schema with a transform, an optional body, a route without a parser, a missing route", () => {
    expect(() => createLane(app().post("/r", () => ({}), { body: t.Object({ n: t.Numeric() }) }), ["/r"])).toThrow(/body schema/);
    expect(() => createLane(app().post("/r", () => ({}), { body: t.Optional(t.Object({ a: t.String() })) }), ["/r"])).toThrow(/body schema/);
    expect(() => createLane(new Elysia().post("/r", () => ({}), { body: t.Object({}) }), ["/r"])).toThrow(/no body parser/);
    expect(() => createLane(app().get("/r", () => ({})), ["/r"])).toThrow(/no POST \/r/);
  });
});

describe("a lane route's lifecycle", () => {
  const schema = { body: t.Object({ n: t.Integer(), tag: t.Optional(t.String({ default: "none" })) }), response: { 200: t.Object({ n: t.Integer(), tag: t.String() }) } };

  test("request → parse → defaults → body schema → handler → response schema → JSON with what the hooks set, then after-response", async () => {
    const log: string[] = [];
    const a = app(log).post("/r", ({ body }) => (log.push("handler"), { n: body.n + 1, tag: body.tag ?? "unset" }), schema);
    const lane = createLane(a, ["/r"]);
    const res = await lane.routes["/r"]!.POST!(post("/r", { n: 1 }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json;charset=utf-8");
    expect(res.headers.get("x-request-id")).toBe("rid");
    expect(await res.json()).toEqual({ n: 2, tag: "none" });
    await Bun.sleep(1);
    expect(log).toEqual(["request", "parse", "handler", "after:200"]);
  });

  test("a request hook's answer ends the request: nothing is parsed, no after-response hook", async () => {
    const log: string[] = [];
    const lane = createLane(app(log).post("/r", () => ({ n: 1, tag: "x" }), schema), ["/r"]);
    const res = await lane.routes["/r"]!.POST!(post("/r", { n: 1 }, { "content-type": "application/json", "x-refuse": "1" }));
    expect([res.status, await res.text(), res.headers.get("x-request-id")]).toEqual([429, "refused", "rid"]);
    await Bun.sleep(1);
    expect(log).toEqual(["request"]);
  });

  test("a parser's failure reaches the error hooks as PARSE, a body failing its schema as VALIDATION", async () => {
    const log: string[] = [];
    const lane = createLane(app(log).post("/r", () => ({ n: 1, tag: "x" }), schema), ["/r"]).routes["/r"]!.POST!;
    const parse = await lane(post("/r", "boom"));
    expect([parse.status, ((await parse.json()) as { code: string }).code]).toEqual([500, "PARSE"]);
    await Bun.sleep(1);
    const invalid = await lane(post("/r", { n: "one" }));
    expect([invalid.status, ((await invalid.json()) as { code: string }).code]).toEqual([400, "VALIDATION"]);
    await Bun.sleep(1);
    expect(log).toEqual(["request", "parse", "error:PARSE", "after:500", "request", "parse", "error:VALIDATION", "after:400"]);
  });

  test("a response failing its schema goes to the error hooks (VALIDATION) instead of out", async () => {
    const lane = createLane(app().post("/r", () => ({ n: "not an integer", tag: "x" }) as never, schema), ["/r"]).routes["/r"]!.POST!;
    const res = await lane(post("/r", { n: 1 }));
    const body = (await res.json()) as { code: string; n?: unknown };
    expect([res.status, body.code, body.n]).toEqual([400, "VALIDATION", undefined]);
  });

  test("a Response from the handler keeps its status and headers and gains the request id", async () => {
    const lane = createLane(
      app().post("/r", () => new Response("raw", { status: 202, headers: { "x-own": "1" } }), schema),
      ["/r"],
    ).routes["/r"]!.POST!;
    const res = await lane(post("/r", { n: 1 }));
    expect([res.status, await res.text(), res.headers.get("x-own"), res.headers.get("x-request-id")]).toEqual([202, "raw", "1", "rid"]);
  });

  test("without an error hook a failure is a bare 500 that echoes nothing", async () => {
    const bare = new Elysia({ normalize: false })
      .onParse({ as: "global" }, async ({ request }) => JSON.parse(await request.text()))
      .post("/r", () => {
        throw new Error("secret detail");
      });
    const res = await createLane(bare, ["/r"]).routes["/r"]!.POST!(post("/r", {}));
    expect([res.status, await res.text()]).toEqual([500, ""]);
  });

  test("find() matches the method and the exact path, whatever the query string", () => {
    const lane = createLane(app().post("/r", () => ({ n: 1, tag: "x" }), schema), ["/r"]);
    expect(lane.find(post("/r?x=1", {}))).toBe(lane.routes["/r"]!.POST);
    expect(lane.find(post("/r/", {}))).toBeUndefined();
    expect(lane.find(new Request("http://localhost/r"))).toBeUndefined();
  });
});
