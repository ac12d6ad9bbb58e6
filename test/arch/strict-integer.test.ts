// One `t`: route schemas take it from src/http/schema.ts, whose t.Integer accepts only a JSON integer.
// Elysia's own t.Integer converts strings ("1e1" → 10) wherever it is used, JSON bodies included
// (issue 8, point 8), so no file but src/http/schema.ts imports Elysia's `t` (even one that builds no
// number today: the next field added to it would).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sourceFiles } from "./checker";

const ROOT = join(import.meta.dir, "../..");
const IMPORTS_ELYSIA_T = /import\s*\{[^}]*\bt\b[^}]*\}\s*from\s*"elysia"/;

export function lenientIntegerFiles(files: { path: string; content: string }[]): string[] {
  return files.filter((f) => f.path !== "src/http/schema.ts" && IMPORTS_ELYSIA_T.test(f.content)).map((f) => f.path);
}

test("no source file but src/http/schema.ts takes Elysia's own t", () => {
  const files = sourceFiles(ROOT).map((path) => ({ path, content: readFileSync(join(ROOT, path), "utf8") }));
  expect(files.length).toBeGreaterThan(50);
  expect(lenientIntegerFiles(files)).toEqual([]);
});

test("the rule can fail", () => {
  const fake = { path: "src/modules/x/model.ts", content: 'import { t } from "elysia";\nexport const A = t.Integer();' };
  const good = { path: "src/modules/y/model.ts", content: 'import { t } from "../../http/schema";\nexport const A = t.Integer();' };
  const noNumber = { path: "src/modules/z/model.ts", content: 'import { Elysia, t } from "elysia";\nexport const A = t.String();' };
  const theOne = { path: "src/http/schema.ts", content: 'import { t as elysiaT } from "elysia";' };
  expect(lenientIntegerFiles([fake, good, noNumber, theOne])).toEqual(["src/modules/x/model.ts", "src/modules/z/model.ts"]);
});
