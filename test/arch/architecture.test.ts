// Enforces the codebase rules on src/ (COMMON.md rules 1-3, STYLE habit 1):
//   env        process.env / Bun.env / import.meta.env only in src/config.ts
//   clock      Date.now, new Date(), Date(), performance.now, Bun.nanoseconds, process.hrtime only in src/shared/clock.ts
//   db         drizzle-orm and sql`…` only in src/db/**, *.sqlite.ts and *.pg.ts
//   sqlite     bun:sqlite and drizzle's SQLite dialect only in *.sqlite.ts and src/db's SQLite files
//   postgres   postgres (postgres.js) and drizzle's PostgreSQL dialect only in *.pg.ts and src/db's PostgreSQL files
//   repo-promise  every method of an `interface …Repo` returns a Promise
//   module-http   src/modules/** and src/jobs/** import nothing from src/http and build no Response,
//                 except in their route files (index.ts, admin.ts, model.ts, present.ts)
//   bare-error no `throw new Error(…)` in src/modules/**/service.ts|domain.ts (AppError instead)
//   import-top every import (and re-export from another module) before any other statement
//   file-size  no source file over MAX_FILE_LINES lines (generated *.gen.ts files aside)
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { checkSource, checkTree, formatViolations, MAX_FILE_LINES, sourceFiles, type RuleId } from "./checker";

const ROOT = join(import.meta.dir, "../..");

describe("the source tree follows the architecture rules", () => {
  test("scans every source file under src/ and no test file", () => {
    const files = sourceFiles(ROOT);
    for (const f of ["src/config.ts", "src/shared/clock.ts", "src/app.ts", "src/db/client.ts", "src/modules/products/service.ts"]) {
      expect(files).toContain(f);
    }
    expect(files.filter((f) => f.endsWith(".test.ts"))).toEqual([]);
  });

  test("no violations", () => {
    const violations = checkTree(ROOT);
    if (violations.length) throw new Error(`Architecture violations:\n${formatViolations(violations)}`);
    expect(violations).toEqual([]);
  });
});

/** Rules that `content` breaks when it lives at `path`. */
const rulesAt = (path: string, content: string): RuleId[] => checkSource(path, content).map((v) => v.rule);

describe("each rule can fail (fake files)", () => {
  const SERVICE = "src/modules/widgets/service.ts";

  const cases: { rule: RuleId; code: string; allowedAt: string }[] = [
    { rule: "env", code: "const port = process.env.PORT;", allowedAt: "src/config.ts" },
    { rule: "env", code: 'const port = process.env["PORT"];', allowedAt: "src/config.ts" },
    { rule: "env", code: "const port = Bun.env.PORT;", allowedAt: "src/config.ts" },
    { rule: "env", code: "const port = import.meta.env.PORT;", allowedAt: "src/config.ts" },
    { rule: "env", code: 'import { env } from "node:process";', allowedAt: "src/config.ts" },
    { rule: "clock", code: "const t = Date.now();", allowedAt: "src/shared/clock.ts" },
    { rule: "clock", code: "const now = Date.now;", allowedAt: "src/shared/clock.ts" },
    { rule: "clock", code: "const d = new Date();", allowedAt: "src/shared/clock.ts" },
    { rule: "clock", code: "const d = new Date;", allowedAt: "src/shared/clock.ts" },
    { rule: "clock", code: "const s = Date();", allowedAt: "src/shared/clock.ts" },
    { rule: "clock", code: "const t = performance.now();", allowedAt: "src/shared/clock.ts" },
    { rule: "clock", code: "const t = Bun.nanoseconds();", allowedAt: "src/shared/clock.ts" },
    { rule: "db", code: 'import { eq } from "drizzle-orm";', allowedAt: "src/modules/widgets/repo.sqlite.ts" },
    { rule: "db", code: 'import { eq } from "drizzle-orm";', allowedAt: "src/modules/widgets/repo.pg.ts" },
    { rule: "db", code: 'import { eq } from "drizzle-orm";', allowedAt: "src/modules/widgets/repo.sql.ts" },
    { rule: "sqlite", code: 'import { sqliteTable } from "drizzle-orm/sqlite-core";', allowedAt: "src/db/schema/widgets.ts" },
    { rule: "sqlite", code: 'import type { Database } from "bun:sqlite";', allowedAt: "src/db/client.ts" },
    { rule: "db", code: 'export { eq } from "drizzle-orm";', allowedAt: "src/db/index.ts" },
    { rule: "sqlite", code: 'const m = await import("bun:sqlite");', allowedAt: "src/jobs/cleanup.sqlite.ts" },
    { rule: "postgres", code: 'import postgres from "postgres";', allowedAt: "src/db/pg.ts" },
    { rule: "postgres", code: 'import { pgTable } from "drizzle-orm/pg-core";', allowedAt: "src/db/schema-pg/widgets.ts" },
    { rule: "postgres", code: 'import { drizzle } from "drizzle-orm/postgres-js";', allowedAt: "src/modules/widgets/repo.pg.ts" },
    { rule: "db", code: "const q = sql`SELECT 1`;", allowedAt: "src/modules/widgets/repo.sqlite.ts" },
    { rule: "db", code: "const q = sql.raw`SELECT 1`;", allowedAt: "src/db/migrate.ts" },
    { rule: "bare-error", code: 'throw new Error("no such widget");', allowedAt: "src/modules/widgets/repo.sqlite.ts" },
    { rule: "bare-error", code: 'throw new TypeError("bad widget");', allowedAt: "src/http/body.ts" },
    { rule: "bare-error", code: 'throw Error("no such widget");', allowedAt: "src/shared/semver.ts" },
  ];

  for (const { rule, code, allowedAt } of cases) {
    test(`${rule}: \`${code}\` fails in ${SERVICE}, passes in ${allowedAt}`, () => {
      expect(rulesAt(SERVICE, code)).toEqual([rule]);
      expect(rulesAt(allowedAt, code)).toEqual([]);
    });
  }

  test("written-once: a repo.sql.ts awaits drizzle's builders and takes its tables from the seam; an engine's own file may do otherwise", () => {
    const ONCE = "src/modules/widgets/repo.sql.ts";
    const ENGINE = "src/modules/widgets/repo.sqlite.ts";
    for (const code of [
      "const r = db.select().from(t).get();",
      "const r = db.select().from(t).all();",
      "db.update(t).set({ a: 1 }).run();",
      'const r = await db.select().from(t).for("update");',
      "const p = db.select().from(t).prepare();",
      'import { widgets } from "../../db/schema";',
      'import { widgets } from "../../db/schema-pg";',
    ]) {
      expect({ code, rules: rulesAt(ONCE, code) }).toEqual({ code, rules: ["written-once"] });
      expect({ code, rules: rulesAt(ENGINE, code).filter((r) => r === "written-once") }).toEqual({ code, rules: [] });
    }
    expect(rulesAt(ONCE, 'import type * as schema from "../../db/schema";')).toEqual([]);
    expect(rulesAt(ONCE, "const m = new Map<string, number>();\nconst n = m.get(\"a\");")).toEqual([]);
    expect(rulesAt(ONCE, 'import { eq } from "drizzle-orm";\nconst r = await d.db.select().from(d.tables.widgets).where(eq(d.tables.widgets.id, "a"));')).toEqual([]);
  });

  test("import-top: an import after another statement fails; imports, type-only imports and re-exports first pass", () => {
    const head = 'import { a } from "./a";\nimport type { B } from "./b";\nexport { c } from "./c";\n';
    expect(rulesAt(SERVICE, `${head}const x = a;\n`)).toEqual([]);
    expect(rulesAt(SERVICE, `${head}const x = a;\nimport { d } from "./d";\n`)).toEqual(["import-top"]);
    expect(rulesAt(SERVICE, `const x = 1;\nexport { e } from "./e";\n`)).toEqual(["import-top"]);
    // A dynamic import is a call, not a declaration: where it is used is its point.
    expect(rulesAt(SERVICE, `const x = 1;\nconst m = await import("./m");\n`)).toEqual([]);
  });

  test("file-size: a file of MAX_FILE_LINES lines passes, one more line fails; generated files are exempt", () => {
    const file = (n: number) => "const x = 1;\n".repeat(n);
    expect(rulesAt(SERVICE, file(MAX_FILE_LINES))).toEqual([]);
    expect(rulesAt(SERVICE, file(MAX_FILE_LINES + 1))).toEqual(["file-size"]);
    expect(rulesAt("src/db/migrations.gen.ts", file(MAX_FILE_LINES + 1))).toEqual([]);
  });

  test("repo-promise: every method of a repository interface returns a Promise", () => {
    const REPO = "src/modules/widgets/repo.ts";
    expect(rulesAt(REPO, "export interface WidgetRepo { find(id: string): Widget | null; }")).toEqual(["repo-promise"]);
    expect(rulesAt(REPO, "export interface WidgetRepo { find: (id: string) => Widget | null; }")).toEqual(["repo-promise"]);
    expect(rulesAt(REPO, "export interface WidgetRepo { find(id: string): Promise<Widget | null>; all: () => Promise<Widget[]>; }")).toEqual([]);
    // Other interfaces are not repositories.
    expect(rulesAt(REPO, "export interface Widget { name(): string; }")).toEqual([]);
  });

  test("module-http: a module's non-route files neither import src/http nor build Responses", () => {
    expect(rulesAt("src/modules/widgets/service.ts", 'import { requestContext } from "../../http/request-context";')).toEqual(["module-http"]);
    expect(rulesAt("src/modules/widgets/repo.pg.ts", 'import type { AdminGuard } from "../../http/auth";')).toEqual(["module-http"]);
    expect(rulesAt("src/jobs/runner.ts", 'import { ok } from "../http/envelope";')).toEqual(["module-http"]);
    expect(rulesAt("src/modules/widgets/domain.ts", "const r = new Response(null, { status: 204 });")).toEqual(["module-http"]);
    for (const route of ["index", "admin", "model", "present"]) {
      expect(rulesAt(`src/modules/widgets/${route}.ts`, 'import { ok } from "../../http/envelope";\nconst r = new Response("");')).toEqual([]);
    }
    expect(rulesAt("src/http/idempotency.ts", 'import { requestContext } from "./request-context";\nconst r = new Response("");')).toEqual([]);
  });

  test("each engine's driver stays in that engine's files", () => {
    expect(rulesAt("src/modules/widgets/repo.pg.ts", 'import { Database } from "bun:sqlite";')).toEqual(["sqlite"]);
    expect(rulesAt("src/modules/widgets/repo.pg.ts", 'import { sqliteTable } from "drizzle-orm/sqlite-core";')).toEqual(["sqlite"]);
    expect(rulesAt("src/modules/widgets/repo.sqlite.ts", 'import postgres from "postgres";')).toEqual(["postgres"]);
    expect(rulesAt("src/db/client.ts", 'import postgres from "postgres";')).toEqual(["postgres"]);
    expect(rulesAt("src/db/pg.ts", 'import { Database } from "bun:sqlite";')).toEqual(["sqlite"]);
  });

  test("bare-error applies to domain.ts too, and to nested module folders", () => {
    expect(rulesAt("src/modules/widgets/domain.ts", 'throw new Error("x");')).toEqual(["bare-error"]);
    expect(rulesAt("src/modules/widgets/parts/service.ts", 'throw new Error("x");')).toEqual(["bare-error"]);
  });

  test("reports file and line", () => {
    const [v] = checkSource("src/app.ts", "const a = 1;\n\nconst t = Date.now();\n");
    expect(v).toEqual({ rule: "clock", file: "src/app.ts", line: 3, text: "Date.now" });
  });

  test("what is not a violation: comments, strings, dated constructors, AppError, other imports", () => {
    const clean = [
      'import { t } from "elysia";',
      'import type { DbHandle } from "../../db/client";',
      "// never call Date.now() or read process.env here",
      "/* import { eq } from 'drizzle-orm' */",
      'const s = "process.env.PORT and new Date() and sql`x`";',
      "const d = new Date(0); const e = new Date(ms); const f = new Date(\"2026-01-01\");",
      'throw new AppError("NOT_FOUND");',
      "const envelope = config.env; const now = clock.now();",
      "const x = sqlish`not sql`;",
    ].join("\n");
    expect(checkSource(SERVICE, clean)).toEqual([]);
  });
});

describe("module import graph", () => {
  /** Module → modules it imports (any file, types included), from src/modules/<name>/*.ts. */
  function moduleGraph(): Map<string, Set<string>> {
    const graph = new Map<string, Set<string>>();
    for (const file of sourceFiles(ROOT).filter((f) => f.startsWith("src/modules/"))) {
      const from = file.split("/")[2]!;
      const deps = graph.get(from) ?? new Set<string>();
      graph.set(from, deps);
      for (const m of readFileSync(join(ROOT, file), "utf8").matchAll(/from "\.\.\/([a-z-]+)\//g)) if (m[1] !== from) deps.add(m[1]!);
    }
    return graph;
  }
  /** Modules reachable from `start` (not counting itself unless a cycle leads back). */
  function reachable(graph: Map<string, Set<string>>, start: string): Set<string> {
    const seen = new Set<string>();
    const stack = [...(graph.get(start) ?? [])];
    while (stack.length) {
      const m = stack.pop()!;
      if (seen.has(m)) continue;
      seen.add(m);
      stack.push(...(graph.get(m) ?? []));
    }
    return seen;
  }
  const LICENSE_MODULES = ["licenses", "license-api", "activations", "floating", "entitlements", "usage", "license-admin"];

  test("the license modules are in no import circle, and the leaf modules import none of their users", () => {
    const graph = moduleGraph();
    for (const m of LICENSE_MODULES) expect({ module: m, inCircle: reachable(graph, m).has(m) }).toEqual({ module: m, inCircle: false });
    const usersOf = (m: string) => [...graph].filter(([, deps]) => deps.has(m)).map(([user]) => user);
    for (const leaf of ["licenses", "license-api"]) {
      for (const user of usersOf(leaf)) expect({ leaf, imports: reachable(graph, leaf).has(user) ? user : null }).toEqual({ leaf, imports: null });
    }
    // The composite admin view sits above what it shows.
    for (const m of ["licenses", "activations", "floating"]) expect(reachable(graph, m).has("license-admin")).toBe(false);
  });
});
