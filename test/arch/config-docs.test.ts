// Keeps the configuration documentation true: every variable src/config.ts reads is listed in the
// README table, .env.example (with a comment, and with values that ARE the defaults) and
// docs/configuration.md — and none of them lists a variable the code does not read.
import { describe, expect, test } from "bun:test";
import ts from "typescript";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config";

const ROOT = join(import.meta.dir, "../..");
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");

/** The configuration's files: src/config.ts and its parts in src/config/. */
const CONFIG_FILES = ["src/config.ts", ...readdirSync(join(ROOT, "src/config")).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts")).map((f) => `src/config/${f}`)];

/** Names read from the `env` record in the configuration's files: helper(env, "NAME", …), env["NAME"], env.NAME. */
function variablesReadByConfig(): string[] {
  const names = new Set<string>();
  const visit = (n: ts.Node) => {
    if (ts.isCallExpression(n)) {
      const [first, second] = n.arguments;
      if (first && ts.isIdentifier(first) && first.text === "env" && second && ts.isStringLiteral(second)) names.add(second.text);
    }
    if (ts.isElementAccessExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === "env" && ts.isStringLiteral(n.argumentExpression)) {
      names.add(n.argumentExpression.text);
    }
    if (ts.isPropertyAccessExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === "env") names.add(n.name.text);
    ts.forEachChild(n, visit);
  };
  for (const file of CONFIG_FILES) visit(ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true));
  return [...names].sort();
}

function readmeTable(): Map<string, string> {
  const readme = read("README.md");
  const section = readme.slice(readme.indexOf("## Configuration"), readme.indexOf("\n## ", readme.indexOf("## Configuration") + 1));
  const rows = new Map<string, string>();
  for (const m of section.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| ([^|]*) \|/gm)) rows.set(m[1]!, m[2]!.trim());
  return rows;
}

function envExample(): { values: Map<string, string>; uncommented: string[] } {
  const values = new Map<string, string>();
  const uncommented: string[] = [];
  let commentInBlock = false;
  for (const line of read(".env.example").split("\n")) {
    if (line.trim() === "") commentInBlock = false;
    else if (line.startsWith("#")) commentInBlock = true;
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) {
      values.set(m[1]!, m[2]!);
      if (!commentInBlock) uncommented.push(m[1]!);
    }
  }
  return { values, uncommented };
}

const variables = variablesReadByConfig();

describe("configuration documentation", () => {
  test("the extractor finds the variables (sanity)", () => {
    expect(variables).toEqual(expect.arrayContaining(["PORT", "DATA_DIR", "RELEASE_KEY_ENCRYPTION_KEY", "STORAGE_DRIVER"]));
    expect(variables.length).toBeGreaterThanOrEqual(30);
  });

  test("the README table lists exactly the variables config.ts reads", () => {
    expect([...readmeTable().keys()].sort()).toEqual(variables);
  });

  test(".env.example lists exactly those variables, each under a comment", () => {
    const { values, uncommented } = envExample();
    expect([...values.keys()].sort()).toEqual(variables);
    expect(uncommented).toEqual([]);
  });

  test(".env.example values are the defaults: loading it changes nothing", () => {
    const env = Object.fromEntries(envExample().values);
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });

  test("README defaults written as literals agree with .env.example", () => {
    const { values } = envExample();
    for (const [name, cell] of readmeTable()) {
      const literal = /^`([^`]*)`$/.exec(cell)?.[1];
      const example = values.get(name);
      if (literal !== undefined && example) expect({ name, readme: literal }).toEqual({ name, readme: example });
    }
  });

  test("docs/configuration.md describes every variable and no other", () => {
    const doc = read("docs/configuration.md");
    const documented = [...doc.matchAll(/^### `([A-Z][A-Z0-9_]*)`/gm)].map((m) => m[1]!).sort();
    expect(documented).toEqual(variables);
  });
});
