// Route schemas take `t` from src/http/schema.ts, whose t.Integer accepts only a JSON integer. Elysia's
// own t.Integer converts strings ("1e1" → 10) wherever it is used, JSON bodies included (issue 8,
// point 8), so a file that builds integers with Elysia's `t` fails here.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sourceFiles } from "./checker";

const ROOT = join(import.meta.dir, "../..");
const IMPORTS_ELYSIA_T = /import\s*\{[^}]*\bt\b[^}]*\}\s*from\s*"elysia"/;
const USES_INTEGER = /\bt\.(Integer|Number|Numeric)\(/;

export function lenientIntegerFiles(files: { path: string; content: string }[]): string[] {
  return files.filter((f) => IMPORTS_ELYSIA_T.test(f.content) && USES_INTEGER.test(f.content)).map((f) => f.path);
}

test("no source file builds a number schema with Elysia's own t", () => {
  const files = sourceFiles(ROOT).map((path) => ({ path, content: readFileSync(join(ROOT, path), "utf8") }));
  expect(files.length).toBeGreaterThan(50);
  expect(lenientIntegerFiles(files)).toEqual([]);
});

test("the rule can fail", () => {
  const fake = { path: "src/modules/x/model.ts", content: 'import { t } from "elysia";\nexport const A = t.Integer();' };
  const good = { path: "src/modules/y/model.ts", content: 'import { t } from "../../http/schema";\nexport const A = t.Integer();' };
  expect(lenientIntegerFiles([fake, good])).toEqual(["src/modules/x/model.ts"]);
});
