// postgres.js as Keyward runs it carries the repairs of scripts/patch-deps.mjs (reconnects that never
// finish, a statement answered with another's result, the stall watchdog…), applied by npm install's
// postinstall. An install with --ignore-scripts leaves them out, and the driver still runs: with the
// bugs back, and DATABASE_STALL_TIMEOUT_MS silently off (the unrepaired options parser drops
// `stall_timeout`). Every command that opens PostgreSQL therefore refuses such a driver first (cli.ts),
// naming the command that repairs it. Two checks:
// 1. The loaded driver itself: the repaired options parser keeps `stall_timeout` (repair 10), an
//    unrepaired one drops it. This holds in the release executable too.
// 2. Under `bun src/main.ts` (node_modules present): every repair, in the files of the copy of the
//    package the runtime resolves, with scripts/patch-deps.mjs's own check. The executable bundles
//    the driver that scripts/build.ts checked before bundling (it refuses an unrepaired one) and has
//    no node_modules: the build defines KEYWARD_BUNDLED_DRIVER, and this check reads no file there.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Defined (true) by scripts/build.ts: the driver is the one bundled into the executable. */
declare const KEYWARD_BUNDLED_DRIVER: boolean | undefined;
const BUNDLED = typeof KEYWARD_BUNDLED_DRIVER !== "undefined" && KEYWARD_BUNDLED_DRIVER;

/** The directory of the installed package that `import(pkg)` from here loads. */
export function resolvedPackageDir(pkg: string): string {
  let dir = dirname(Bun.resolveSync(pkg, import.meta.dir));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).name === pkg) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json of ${pkg} above ${Bun.resolveSync(pkg, import.meta.dir)}`);
    dir = up;
  }
}

export interface DriverCheckOptions {
  /** Where each repaired package is installed; default: the copy the runtime resolves. */
  packageDir?: (pkg: string) => string;
}

/**
 * What is missing from the PostgreSQL driver this process loads, as one message naming the command
 * that repairs it; null when every repair is in place.
 */
export async function driverRepairProblem(opts: DriverCheckOptions = {}): Promise<string | null> {
  const problems: string[] = [];
  const { default: postgres } = await import("postgres");
  // No connection is opened: postgres.js connects on the first statement.
  const probe = postgres({ host: "127.0.0.1", max: 1 });
  if (!("stall_timeout" in probe.options)) problems.push('its options parser drops "stall_timeout" (repair 10; DATABASE_STALL_TIMEOUT_MS would be off)');
  await probe.end({ timeout: 0 });
  if (BUNDLED) {
    if (problems.length === 0) return null;
    return `the PostgreSQL driver bundled in this executable lacks Keyward's repairs of it (${problems[0]}): build it with \`bun scripts/build.ts\`, which checks them`;
  }
  const { patchDependencies, REPAIR_COMMAND } = await import("../../scripts/patch-deps.mjs");
  const packageDir = opts.packageDir ?? resolvedPackageDir;
  problems.push(...patchDependencies({ check: true, packageDir }).problems);
  if (problems.length === 0) return null;
  return (
    `the PostgreSQL driver (postgres.js in ${packageDir("postgres")}) lacks Keyward's repairs of it: run \`${REPAIR_COMMAND}\` in Keyward's ` +
    `directory (npm install runs it; an install with --ignore-scripts does not), then start again (${problems.length} missing; first: ${problems[0]})`
  );
}
