// The dependency repairs of scripts/patch-deps.mjs (applied by npm install's postinstall) are in
// place in the node_modules the tests and the server run on: an install with --ignore-scripts, or a
// new version of a repaired package, fails here with the reason instead of somewhere downstream.
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { patchDependencies, REPAIRS } from "../../scripts/patch-deps.mjs";
import { copyUnrepaired } from "../support/unrepaired-driver";

const root = join(import.meta.dir, "../..");

test("every dependency repair is applied", () => {
  expect(patchDependencies({ root, check: true }).problems).toEqual([]);
});

test("on an unrepaired copy the check fails, the repair applies once, and a second run changes nothing", () => {
  const dir = mkdtempSync(join(tmpdir(), "keyward-patch-deps-"));
  try {
    const pkg = join(dir, "node_modules", "postgres");
    // The copy back to the package's own text: each edit's replacement undone.
    const { files, edits, pristine } = copyUnrepaired(root, dir);

    const check = patchDependencies({ root: dir, check: true });
    expect(check.problems.length).toBe(edits);
    expect(check.problems[0]).toContain("is not applied (run: node scripts/patch-deps.mjs)");
    const first = patchDependencies({ root: dir });
    expect(first.problems).toEqual([]);
    expect(first.applied.length).toBe(files);
    // Byte for byte what the installed, repaired package holds.
    for (const repair of REPAIRS) {
      for (const file of repair.files) {
        expect(readFileSync(join(dir, "node_modules", repair.pkg, file), "utf8")).toBe(readFileSync(join(root, "node_modules", repair.pkg, file), "utf8"));
      }
    }
    expect(patchDependencies({ root: dir })).toEqual({ problems: [], applied: [] });

    // Text the repair does not know (an edited or upstream-fixed file): refused, and the file is
    // left exactly as it was, not with its other edits applied.
    const connection = join(pkg, "src/connection.js");
    const repaired = readFileSync(connection, "utf8");
    const unknown = pristine.get(connection)!.replace(REPAIRS[0]!.edits[0]!.from, "    clearImmediate(nextWriteTimer) // changed\n    if (socket) {");
    writeFileSync(connection, unknown);
    expect(patchDependencies({ root: dir }).problems.join("\n")).toContain("does not apply (the text it replaces is not there exactly once)");
    expect(readFileSync(connection, "utf8")).toBe(unknown);
    writeFileSync(connection, repaired);

    // Another version: refused, with the reason.
    const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ ...manifest, version: "3.4.10" }));
    expect(patchDependencies({ root: dir }).problems.join("\n")).toContain("postgres is 3.4.10, the repair in scripts/patch-deps.mjs is for 3.4.9");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
