// Architecture rules (COMMON rules 1-3 and habit 1), checked on the syntax tree rather than with text
// search, so a rule named in a comment or a string is not a violation and `new Date(x)` is not a
// clock read. Pure: `checkSource` takes a path and content, so each rule's failure can be proven on
// a fake file.
import ts from "typescript";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";

export type RuleId = "env" | "clock" | "db" | "sqlite" | "postgres" | "repo-promise" | "module-http" | "bare-error" | "import-top" | "file-size" | "written-once";

/** The most lines a source file may have (generated files aside): a longer one is split by what its parts do. */
export const MAX_FILE_LINES = 400;

export const RULES: Record<RuleId, { allowed: (path: string) => boolean; fix: string }> = {
  env: {
    allowed: (p) => p === "src/config.ts",
    fix: "read settings from deps.config; add new variables to src/config.ts (validated, named error)",
  },
  clock: {
    allowed: (p) => p === "src/shared/clock.ts",
    fix: "use deps.clock.now() / nowMs() / monotonicMs() so tests can fix the time",
  },
  db: {
    allowed: (p) => p.startsWith("src/db/") || p.endsWith(".sqlite.ts") || p.endsWith(".pg.ts") || p.endsWith(".sql.ts"),
    fix: "keep drizzle and SQL in src/db/** or a repository file (repo.sql.ts, or repo.sqlite.ts / repo.pg.ts) behind a repository interface",
  },
  sqlite: {
    allowed: (p) => p.endsWith(".sqlite.ts") || SQLITE_DB_FILES.test(p),
    fix: "bun:sqlite and drizzle's SQLite dialect belong in *.sqlite.ts files (or src/db's SQLite files)",
  },
  postgres: {
    allowed: (p) => p.endsWith(".pg.ts") || PG_DB_FILES.test(p),
    fix: "postgres (postgres.js) and drizzle's PostgreSQL dialect belong in *.pg.ts files (or src/db's PostgreSQL files)",
  },
  "module-http": {
    // Route files (index.ts, admin.ts, model.ts, present.ts) are the HTTP layer of a module.
    allowed: (p) => !/^src\/(modules|jobs)\//.test(p) || /\/(index|admin|model|present)\.ts$/.test(p),
    fix: "modules speak domain types: move Request/Response handling into src/http or the module's route files",
  },
  "repo-promise": {
    allowed: () => false,
    fix: "repository methods return Promise<…>: both engines must be able to implement them",
  },
  "bare-error": {
    allowed: (p) => !/^src\/modules\/.+\/(service|domain)\.ts$/.test(p),
    fix: 'expected outcomes are AppError("CODE") with a code from src/shared/errors.ts',
  },
  "import-top": {
    allowed: () => false,
    fix: "put every import (and re-export from another module) at the top of the file, before any other statement",
  },
  "written-once": {
    allowed: (p) => !p.endsWith(".sql.ts"),
    fix: "a repository written once (repo.sql.ts) takes its tables from the query seam (d.tables) and awaits drizzle's builders; an engine's own executors (.get/.all/.run/.execute/.prepare, .for) go through src/db/dialect/query.ts",
  },
  "file-size": {
    allowed: (p) => p.endsWith(".gen.ts"),
    fix: `split the file by what its parts do (at most ${MAX_FILE_LINES} lines)`,
  },
};

export interface Violation {
  rule: RuleId;
  file: string;
  line: number;
  text: string;
}

const DB_MODULES = /^drizzle-orm(\/.*)?$/;
const SQLITE_MODULES = /^(bun:sqlite|drizzle-orm\/(sqlite-core|bun-sqlite)(\/.*)?)$/;
const PG_MODULES = /^(postgres|drizzle-orm\/(pg-core|postgres-js)(\/.*)?)$/;
/** src/db files that belong to one engine (the rest of src/db is engine-neutral or drizzle-only). */
const SQLITE_DB_FILES = /^src\/db\/(client|migrate|backup|copy|copy-plan|migrations\.gen|dialect\/sqlite)\.ts$|^src\/db\/schema\//;
const PG_DB_FILES = /^src\/db\/(pg|copy|copy-plan|migrations-pg\.gen|dialect\/pg)\.ts$|^src\/db\/schema-pg\//;
const BARE_ERRORS = new Set(["Error", "TypeError", "RangeError"]);
/** Methods of one engine's builders or prepared statements (SQLite's synchronous ones, PostgreSQL's row locks). */
const ENGINE_EXECUTORS = new Set(["get", "all", "run", "execute", "prepare", "for", "sync"]);

const isId = (n: ts.Node, name: string): boolean => ts.isIdentifier(n) && n.text === name;

/** `a.b` or `a["b"]` */
function member(n: ts.Node): { object: ts.Expression; name: string } | null {
  if (ts.isPropertyAccessExpression(n)) return { object: n.expression, name: n.name.text };
  if (ts.isElementAccessExpression(n) && ts.isStringLiteralLike(n.argumentExpression)) {
    return { object: n.expression, name: n.argumentExpression.text };
  }
  return null;
}

function isImportMeta(n: ts.Node): boolean {
  return ts.isMetaProperty(n) && n.keywordToken === ts.SyntaxKind.ImportKeyword && n.name.text === "meta";
}

function moduleSpecifier(n: ts.Node): string | null {
  if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) {
    return n.moduleSpecifier.text;
  }
  if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference) && ts.isStringLiteral(n.moduleReference.expression)) {
    return n.moduleReference.expression.text;
  }
  if (ts.isCallExpression(n) && (n.expression.kind === ts.SyntaxKind.ImportKeyword || isId(n.expression, "require"))) {
    const arg = n.arguments[0];
    if (arg && ts.isStringLiteralLike(arg)) return arg.text;
  }
  return null;
}

/** Which rule, if any, this node breaks (ignoring where it is). */
function ruleOf(n: ts.Node): RuleId | null {
  const m = member(n);
  if (m) {
    // process.env, Bun.env, import.meta.env (Bun's alias of process.env)
    if (m.name === "env" && (isId(m.object, "process") || isId(m.object, "Bun") || isImportMeta(m.object))) return "env";
    // Date.now, performance.now, Bun.nanoseconds, process.hrtime: read as a call or passed as a function
    if (m.name === "now" && (isId(m.object, "Date") || isId(m.object, "performance"))) return "clock";
    if ((m.name === "nanoseconds" && isId(m.object, "Bun")) || (m.name === "hrtime" && isId(m.object, "process"))) return "clock";
  }
  // new Date() / new Date with no argument, and Date() called as a function (a string of now)
  if (ts.isNewExpression(n) && isId(n.expression, "Date") && (n.arguments?.length ?? 0) === 0) return "clock";
  if (ts.isCallExpression(n) && isId(n.expression, "Date")) return "clock";

  // A builder chain ending in one engine's executor: db.select()….get(), ….for("update").
  if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && ts.isCallExpression(n.expression.expression) && ENGINE_EXECUTORS.has(n.expression.name.text)) {
    return "written-once";
  }
  const spec = moduleSpecifier(n);
  if (spec !== null) {
    // The tables of one engine, imported as values (types are erased).
    if (/(^|\/)db\/schema(-pg)?(\/|$)/.test(spec) && !(ts.isImportDeclaration(n) && n.importClause?.isTypeOnly)) return "written-once";
    if (/(^|\/)http\//.test(spec) && spec.startsWith(".")) return "module-http";
    if (SQLITE_MODULES.test(spec)) return "sqlite";
    if (PG_MODULES.test(spec)) return "postgres";
    if (DB_MODULES.test(spec)) return "db";
    // import { env } from "node:process"
    if (/^(node:)?process$/.test(spec) && ts.isImportDeclaration(n)) {
      const named = n.importClause?.namedBindings;
      if (named && ts.isNamedImports(named) && named.elements.some((e) => (e.propertyName ?? e.name).text === "env")) return "env";
    }
  }
  // raw SQL: sql`…` or sql.raw`…`
  if (ts.isTaggedTemplateExpression(n) && (isId(n.tag, "sql") || (member(n.tag) !== null && isId(member(n.tag)!.object, "sql")))) return "db";

  // Building a Response: the HTTP layer's job.
  if (ts.isNewExpression(n) && isId(n.expression, "Response")) return "module-http";
  // A repository interface (`interface XRepo`) whose method does not return a Promise.
  if (ts.isInterfaceDeclaration(n) && /Repo$/.test(n.name.text)) {
    for (const m of n.members) {
      const type = ts.isMethodSignature(m) ? m.type : ts.isPropertySignature(m) && m.type && ts.isFunctionTypeNode(m.type) ? m.type.type : undefined;
      if ((ts.isMethodSignature(m) || (ts.isPropertySignature(m) && m.type && ts.isFunctionTypeNode(m.type))) && !isPromiseType(type)) return "repo-promise";
    }
  }

  if (ts.isThrowStatement(n) && n.expression && (ts.isNewExpression(n.expression) || ts.isCallExpression(n.expression))) {
    const callee = n.expression.expression;
    if (ts.isIdentifier(callee) && BARE_ERRORS.has(callee.text)) return "bare-error";
  }
  return null;
}

function isPromiseType(t: ts.TypeNode | undefined): boolean {
  return !!t && ts.isTypeReferenceNode(t) && ts.isIdentifier(t.typeName) && t.typeName.text === "Promise";
}

/** `path` is relative to the repository root with forward slashes, e.g. "src/modules/x/service.ts". */
export function checkSource(path: string, content: string): Violation[] {
  const source = ts.createSourceFile(path, content, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: Violation[] = [];
  const report = (rule: RuleId, n: ts.Node) => {
    if (RULES[rule].allowed(path)) return;
    const { line } = source.getLineAndCharacterOfPosition(n.getStart(source));
    out.push({ rule, file: path, line: line + 1, text: n.getText(source).split("\n")[0]!.slice(0, 120) });
  };
  const visit = (n: ts.Node) => {
    const rule = ruleOf(n);
    if (rule) report(rule, n);
    ts.forEachChild(n, visit);
  };
  visit(source);
  // Imports first: an import after other statements is hoisted anyway, and hides what the file needs.
  let code = false;
  for (const st of source.statements) {
    const importing = ts.isImportDeclaration(st) || ts.isImportEqualsDeclaration(st) || (ts.isExportDeclaration(st) && st.moduleSpecifier !== undefined);
    if (!importing) code = true;
    else if (code) report("import-top", st);
  }
  const lines = content.split("\n").length - (content.endsWith("\n") ? 1 : 0);
  if (lines > MAX_FILE_LINES && !RULES["file-size"].allowed(path)) {
    out.push({ rule: "file-size", file: path, line: MAX_FILE_LINES + 1, text: `${lines} lines` });
  }
  return out;
}

/** Every source file under `<root>/src` (TypeScript, not tests), as repository-relative paths. */
export function sourceFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.(ts|tsx|mts|cts)$/.test(name) && !/\.test\.(ts|tsx)$/.test(name) && !name.endsWith(".d.ts")) {
        files.push(relative(root, full).split(sep).join("/"));
      }
    }
  };
  walk(join(root, "src"));
  return files.sort();
}

export function checkTree(root: string): Violation[] {
  return sourceFiles(root).flatMap((f) => checkSource(f, readFileSync(join(root, f), "utf8")));
}

export function formatViolations(violations: Violation[]): string {
  return violations.map((v) => `${v.file}:${v.line} [${v.rule}] ${v.text}\n    fix: ${RULES[v.rule].fix}`).join("\n");
}
