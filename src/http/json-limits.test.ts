import { describe, expect, test } from "bun:test";
import { jsonShapeViolation, MAX_JSON_DEPTH, MAX_JSON_NODES, unstorableStringPath } from "./json-limits";

const nested = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

describe("jsonShapeViolation", () => {
  test("nesting up to the limit passes; one level more is refused", () => {
    expect(jsonShapeViolation(nested(MAX_JSON_DEPTH))).toBeNull();
    expect(jsonShapeViolation(nested(MAX_JSON_DEPTH + 1))).toBe("depth");
    expect(jsonShapeViolation("[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1))).toBe("depth");
  });

  test("siblings do not add depth", () => {
    const wide = `[${Array.from({ length: 100 }, () => nested(10)).join(",")}]`;
    expect(jsonShapeViolation(wide)).toBeNull();
  });

  test("brackets, commas and escaped quotes inside strings do not count", () => {
    const s = JSON.stringify({ s: "[".repeat(1000) + '\\"{' + ",".repeat(MAX_JSON_NODES + 10) });
    expect(jsonShapeViolation(s)).toBeNull();
  });

  test("more values than the limit are refused", () => {
    expect(jsonShapeViolation(`[${"0,".repeat(MAX_JSON_NODES - 2)}0]`)).toBeNull();
    expect(jsonShapeViolation(`[${"0,".repeat(MAX_JSON_NODES)}0]`)).toBe("nodes");
  });

  test("stops at the limit: a body a million levels deep is refused without reading it all", () => {
    // Structural, not timed: the depth counter never passes limit + 1, whatever the body holds.
    const huge = "[".repeat(1_000_000);
    expect(jsonShapeViolation(huge)).toBe("depth");
  });
});

describe("unstorableStringPath", () => {
  const check = (text: string) => {
    const found = unstorableStringPath(JSON.parse(text), text);
    return found && (found.reason === "surrogate" ? found.path : `${found.reason}: ${found.path}`);
  };

  test("names the field holding an unpaired surrogate, high or low", () => {
    expect(check('{"identifier":"dev\\ud800"}')).toBe("identifier");
    expect(check('{"identifier":"\\udc00x"}')).toBe("identifier");
    expect(check('{"metadata":{"a":["ok","\\uDBFF"]}}')).toBe("metadata.a.1");
    expect(check('{"\\ud800":1}')).toBe("\ud800");
  });

  test("a surrogate pair, written escaped or raw, is fine", () => {
    expect(check('{"identifier":"\\ud83d\\ude00"}')).toBeNull();
    expect(check('{"identifier":"😀"}')).toBeNull();
    expect(check('{"identifier":"\\\\ud800"}')).toBeNull(); // an escaped backslash, not an escape
  });

  test("names the field or key holding U+0000, which PostgreSQL cannot store", () => {
    expect(check('{"identifier":"a\\u0000b"}')).toBe("nul: identifier");
    expect(check('{"metadata":{"k":["ok","\\u0000"]}}')).toBe("nul: metadata.k.1");
    expect(check('{"metadata":{"a\\u0000":1}}')).toBe("nul: metadata.a\u0000");
    expect(check('"\\u0000"')).toBe("nul: body");
  });

  test("an escaped backslash before u0000 is text, not U+0000", () => {
    expect(check('{"identifier":"\\\\u0000"}')).toBeNull();
    expect(check('{"identifier":"\\u0001\\u001f"}')).toBeNull();
  });
});
