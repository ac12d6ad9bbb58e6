// What a start loads. The PostgreSQL engine (postgres.js), nodemailer and the webhook sender's
// node:http/https are imported where they are first used (container.ts, email/handler.ts,
// webhooks/deliver.ts), and so are the Stripe SDK (payments/stripe.ts, on the first payment call) and
// the OpenAPI plugin (http/openapi.ts, on the first request for the document). The release build
// splits such imports into chunks of their own (scripts/build.ts, --splitting), so a node on SQLite
// that has sent no email and no webhook yet, taken no payment and served no API document does not
// load them, nor node:tls, node:http… that they bring. Checked on the module graph of a split bundle
// of src/main.ts: the chunks its entry imports statically, and what their modules import.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");

interface Metafile {
  inputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[] }>;
  outputs: Record<string, { imports: { path: string; kind: string }[]; inputs: Record<string, unknown>; entryPoint?: string }>;
}

/** Node built-ins that a start on SQLite has no use for (each costs milliseconds to load). */
const NOT_AT_START = ["tls", "http", "https", "http2", "child_process", "perf_hooks", "zlib", "dns", "dns/promises", "fs/promises"];
/** Packages loaded on first use: each is a sizeable share of the start's time and memory when loaded eagerly. */
const LAZY_PACKAGES = ["postgres", "nodemailer", "stripe", "@elysiajs/openapi"];
const LAZY_MODULES = new RegExp(`(^|/)(node_modules/(${LAZY_PACKAGES.join("|")})/|src/repos\\.pg\\.ts$|src/db/pg\\.ts$|src/db/copy\\.ts$)`);

let meta: Metafile;
let outdir: string;
beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), "keyward-split-"));
  const result = await Bun.build({
    entrypoints: [join(ROOT, "src/main.ts")],
    target: "bun",
    format: "esm",
    splitting: true,
    outdir,
    metafile: true,
  } as Parameters<typeof Bun.build>[0]);
  expect(result.success).toBe(true);
  meta = (result as unknown as { metafile: Metafile }).metafile;
}, 120_000);
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** The outputs the entry loads before it runs: itself and its static imports, transitively. */
function loadedAtStart(): { modules: Set<string>; builtins: Set<string> } {
  const entry = Object.keys(meta.outputs).find((o) => meta.outputs[o]!.entryPoint?.endsWith("src/main.ts"));
  if (!entry) throw new Error("no output for src/main.ts in the metafile");
  const chunks = new Set<string>();
  const visit = (output: string) => {
    if (chunks.has(output)) return;
    chunks.add(output);
    for (const i of meta.outputs[output]!.imports) if (i.kind !== "dynamic-import" && meta.outputs[i.path]) visit(i.path);
  };
  visit(entry);
  const modules = new Set([...chunks].flatMap((c) => Object.keys(meta.outputs[c]!.inputs)));
  const builtins = new Set<string>();
  for (const m of modules) {
    for (const i of meta.inputs[m]?.imports ?? []) if (i.external && i.kind !== "dynamic-import") builtins.add(i.path.replace(/^node:/, ""));
  }
  return { modules, builtins };
}

test("the bundle holds the lazily loaded modules (the check below looks at something)", () => {
  const all = Object.values(meta.outputs).flatMap((o) => Object.keys(o.inputs));
  for (const m of [...LAZY_PACKAGES.map((p) => `node_modules/${p}/`), "src/repos.pg.ts"]) expect({ m, bundled: all.some((p) => p.includes(m)) }).toEqual({ m, bundled: true });
  const { modules, builtins } = loadedAtStart();
  expect([...modules].some((p) => p.endsWith("src/container.ts"))).toBe(true);
  expect(builtins.has("crypto")).toBe(true);
});

test("a start loads neither postgres.js, nodemailer, the Stripe SDK, the OpenAPI plugin nor node:tls/http/https/child_process/dns", () => {
  const { modules, builtins } = loadedAtStart();
  expect([...modules].filter((p) => LAZY_MODULES.test(p))).toEqual([]);
  expect(NOT_AT_START.filter((b) => builtins.has(b))).toEqual([]);
});

test("nothing a start loads calls Bun.cron: its first use costs a start 13–25 ms and ~5 MB (jobs/cron.ts keeps the schedules)", () => {
  const { modules } = loadedAtStart();
  const ours = [...modules].filter((p) => p.startsWith("src/"));
  expect(ours).toContain("src/jobs/scheduler.ts");
  const callers = ours.filter((p) => /\bBun\.cron(?:\.parse)?\(/.test(readFileSync(join(ROOT, p), "utf8")));
  expect(callers).toEqual([]);
});

test("a start composes the client area only: no console module (admin, sign-in, portal, payments routes) is loaded", () => {
  const { modules } = loadedAtStart();
  const ours = [...modules].filter((p) => p.startsWith("src/"));
  // The client area is loaded (the check below looks at something), the console area is not.
  expect(ours).toContain("src/areas/client.ts");
  const console = ours.filter(
    (p) =>
      p === "src/areas/console.ts" ||
      /^src\/(modules\/[^/]+|jobs)\/admin\.ts$/.test(p) ||
      ["src/modules/portal/index.ts", "src/modules/sign-in/index.ts", "src/modules/oauth/index.ts", "src/modules/payments/index.ts", "src/http/openapi.ts"].includes(p),
  );
  expect(console).toEqual([]);
});
