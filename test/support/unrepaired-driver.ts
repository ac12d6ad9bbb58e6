// A copy of an installed, repaired package with every repair of scripts/patch-deps.mjs undone: what
// `npm install --ignore-scripts` leaves. The shared node_modules is never touched.
import { expect } from "bun:test";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPAIRS } from "../../scripts/patch-deps.mjs";

export const REPAIR_MARK = "/* keyward-patch */";

export interface UnrepairedCopy {
  /** Files the repairs edit, and edits undone. */
  files: number;
  edits: number;
  /** Each edited file's unrepaired text, by path. */
  pristine: Map<string, string>;
}

/** Copies `pkg` from root's node_modules into dir/node_modules and undoes each edit's replacement. */
export function copyUnrepaired(root: string, dir: string, pkg = "postgres"): UnrepairedCopy {
  cpSync(join(root, "node_modules", pkg), join(dir, "node_modules", pkg), { recursive: true, dereference: true });
  let files = 0;
  let edits = 0;
  const pristine = new Map<string, string>();
  for (const repair of REPAIRS.filter((r) => r.pkg === pkg)) {
    for (const file of repair.files) {
      const path = join(dir, "node_modules", repair.pkg, file);
      let text = readFileSync(path, "utf8");
      for (const edit of repair.edits) {
        expect(text.split(edit.to).length - 1).toBe(1);
        text = text.replace(edit.to, edit.from);
        edits++;
      }
      expect(text).not.toContain(REPAIR_MARK);
      writeFileSync(path, text);
      pristine.set(path, text);
      files++;
    }
  }
  return { files, edits, pristine };
}
