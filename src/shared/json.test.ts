import { expect, test } from "bun:test";
import { sortedKeys } from "./json";

test("objects come out with keys in byte order, recursively; arrays keep their order", () => {
  const stored = { status: { to: "suspended", from: "active" }, a: [{ z: 1, b: 2 }, 3], B: null };
  const out = sortedKeys(stored);
  expect(JSON.stringify(out)).toBe('{"B":null,"a":[{"b":2,"z":1},3],"status":{"from":"active","to":"suspended"}}');
  // jsonb's order (shorter keys first) and insertion order give the same text.
  expect(JSON.stringify(sortedKeys({ from: "active", to: "suspended" }))).toBe(JSON.stringify(sortedKeys({ to: "suspended", from: "active" })));
  expect(sortedKeys(null)).toBeNull();
  expect(sortedKeys("x")).toBe("x");
});
