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
export function patchDependencies(opts?: { root?: string; check?: boolean }): { problems: string[]; applied: string[] };
