// External programs some tests drive for real, as the independent check of what Keyward produces
// (shared/reference/real-clients.md). `npm test` must pass on a machine with only Node.js, so a test
// that needs one of them is declared with `toolTest(name)` instead of `test`:
//   - tool present: an ordinary test;
//   - tool absent: the test is skipped and one line says so on stderr,
//       SKIP (minisign not installed; apt-get install -y minisign): <test name>
//   - tool absent and KEYWARD_REQUIRE_TOOLS=1 (set by .ci/run, which installs them): the test fails.
// Add a tool to TOOLS to use it in a test.
import { test } from "bun:test";
import { pgbouncerPath } from "./pgbouncer";

export interface Tool {
  /** Debian package that provides it. */
  apt: string;
  /** Whether it can run here. */
  available(): boolean;
}

/** The variable that turns a skip into a failure. */
export const REQUIRE_TOOLS_VAR = "KEYWARD_REQUIRE_TOOLS";

const onPath = (command: string) => () => Bun.which(command) !== null;

export const TOOLS = {
  /** The reference minisign: verifies Tauri / minisign release signatures. */
  minisign: { apt: "minisign", available: onPath("minisign") },
  /** libxml2's xmllint: appcast well-formedness and namespaces. */
  xmllint: { apt: "libxml2-utils", available: onPath("xmllint") },
  /** Debian's Chromium, driven by playwright-core: pages in a real browser. */
  chromium: { apt: "chromium", available: () => CHROMIUM !== null },
  /** A real connection pooler in transaction mode in front of PostgreSQL (test/support/pgbouncer.ts). */
  pgbouncer: { apt: "pgbouncer", available: () => pgbouncerPath() !== null },
  /** strace: counts the disk syncs a commit makes (test/db/durable.test.ts). */
  strace: { apt: "strace", available: onPath("strace") },
} satisfies Record<string, Tool>;

export type ToolName = keyof typeof TOOLS;

/** Path of the Chromium executable, or null. */
export const CHROMIUM: string | null = Bun.which("chromium") ?? Bun.which("chromium-browser");

const required = () => process.env[REQUIRE_TOOLS_VAR] === "1";
const cache = new Map<ToolName, boolean>();

export function hasTool(name: ToolName): boolean {
  let found = cache.get(name);
  if (found === undefined) cache.set(name, (found = TOOLS[name].available()));
  return found;
}

type TestFn = () => void | Promise<unknown>;

/** `test`, for a test that runs `tool`: skipped with one visible line when the tool is absent. */
export function toolTest(name: ToolName): (title: string, fn: TestFn, timeout?: number) => void {
  return (title, fn, timeout) => {
    if (hasTool(name)) return test(title, fn, timeout);
    const { apt } = TOOLS[name];
    if (required()) {
      return test(title, () => {
        throw new Error(`${name} is not installed (apt-get install -y ${apt}), and ${REQUIRE_TOOLS_VAR}=1 requires it`);
      });
    }
    console.warn(`SKIP (${name} not installed; apt-get install -y ${apt}): ${title}`);
    return test.skip(title, fn, timeout);
  };
}
