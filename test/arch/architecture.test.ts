// Enforces the codebase rules on src/ (COMMON.md rules 1-3, STYLE habit 1):
//   env        process.env / Bun.env / import.meta.env only in src/config.ts
//   clock      Date.now, new Date(), Date(), performance.now, Bun.nanoseconds, process.hrtime only in src/shared/clock.ts
//   db         drizzle-orm, bun:sqlite and sql`…` only in src/db/**, *.sqlite.ts and *.pg.ts
//   bare-error no `throw new Error(…)` in src/modules/**/service.ts|domain.ts (AppError instead)
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { checkSource, checkTree, formatViolations, sourceFiles, type RuleId } from "./checker";

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
    { rule: "db", code: 'import { sqliteTable } from "drizzle-orm/sqlite-core";', allowedAt: "src/db/schema/widgets.ts" },
    { rule: "db", code: 'import type { Database } from "bun:sqlite";', allowedAt: "src/db/client.ts" },
    { rule: "db", code: 'export { eq } from "drizzle-orm";', allowedAt: "src/db/index.ts" },
    { rule: "db", code: 'const m = await import("bun:sqlite");', allowedAt: "src/jobs/cleanup.sqlite.ts" },
    { rule: "db", code: 'import { eq } from "drizzle-orm";', allowedAt: "src/modules/widgets/repo.pg.ts" },
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
      "// never call Date.now() or read process.env here",
      "/* import { eq } from 'drizzle-orm' */",
      'const s = "process.env.PORT and new Date() and sql`x`";',
      "const d = new Date(0); const e = new Date(ms); const f = new Date(\"2026-01-01\");",
      'throw new AppError("NOT_FOUND");',
      'import { t } from "elysia";',
      'import type { DbHandle } from "../../db/client";',
      "const envelope = config.env; const now = clock.now();",
      "const x = sqlish`not sql`;",
    ].join("\n");
    expect(checkSource(SERVICE, clean)).toEqual([]);
  });
});
