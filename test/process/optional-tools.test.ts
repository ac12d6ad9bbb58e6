// The README's test command passes on a machine with only Node.js: tests that drive an external
// tool (minisign, xmllint, Chromium) skip with one visible line when it is absent, and fail instead
// when KEYWARD_REQUIRE_TOOLS=1 (.ci/run installs the tools and sets it). Proven by running those
// test files in a child `bun test` whose PATH holds nothing but bun.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { REQUIRE_TOOLS_VAR } from "../support/tools";

const root = join(import.meta.dir, "../..");
const bare = mkdtempSync(join(tmpdir(), "keyward-bare-path-"));
symlinkSync(process.execPath, join(bare, "bun"));
afterAll(() => rmSync(bare, { recursive: true, force: true }));

/** Test files that run an external tool: they must all go through test/support/tools.ts. */
const TOOL_USE = /minisignVerify\(|\[\s*"(minisign|xmllint|chromium)"|chromium\.launch|xmllint/;
function toolTestFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory() && e.name !== "node_modules") walk(p);
      else if (e.isFile() && e.name.endsWith(".test.ts") && p !== import.meta.path && TOOL_USE.test(readFileSync(p, "utf8"))) out.push(p);
    }
  };
  walk(join(root, "src"));
  walk(join(root, "test"));
  return out.map((p) => relative(root, p)).sort();
}

function bunTest(files: string[], env: Record<string, string>) {
  const r = Bun.spawnSync([join(bare, "bun"), "test", "--timeout", "60000", ...files], {
    cwd: root,
    env: { ...process.env, PATH: bare, [REQUIRE_TOOLS_VAR]: "", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { exitCode: r.exitCode, output: r.stdout.toString() + r.stderr.toString() };
}

describe("tests that need an external tool, on a machine without it", () => {
  const files = toolTestFiles();

  test("are found, and each declares its tool with toolTest()", () => {
    expect(files).toEqual(expect.arrayContaining(["src/crypto/minisign.test.ts", "test/http/release-keys/release-keys.test.ts"]));
    for (const f of files) expect({ f, usesHelper: readFileSync(join(root, f), "utf8").includes("toolTest(") }).toEqual({ f, usesHelper: true });
  });

  test("skip with one visible line each, and the run passes", () => {
    const r = bunTest(files, {});
    expect(r.output).toContain("SKIP (minisign not installed; apt-get install -y minisign): ");
    expect(r.output).toMatch(/\n\s*0 fail\b/);
    expect(r.output).toMatch(/\n\s*[1-9]\d* skip\b/);
    expect(r.exitCode).toBe(0);
  }, 180_000);

  test(`fail when ${REQUIRE_TOOLS_VAR}=1`, () => {
    const r = bunTest(["src/crypto/minisign.test.ts"], { [REQUIRE_TOOLS_VAR]: "1" });
    expect(r.output).toContain(`minisign is not installed (apt-get install -y minisign), and ${REQUIRE_TOOLS_VAR}=1 requires it`);
    expect(r.output).not.toContain("SKIP (");
    expect(r.exitCode).not.toBe(0);
  }, 60_000);
});
