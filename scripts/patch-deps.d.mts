// Types of scripts/patch-deps.mjs (plain Node.js, so that npm's postinstall can run it without Bun).
export interface Edit {
  name: string;
  from: string;
  to: string;
}
export interface Repair {
  pkg: string;
  version: string;
  files: string[];
  edits: Edit[];
}
export const REPAIRS: Repair[];
export const REPAIR_COMMAND: string;
export function patchDependencies(opts?: { root?: string; check?: boolean; packageDir?: (pkg: string) => string }): { problems: string[]; applied: string[] };
