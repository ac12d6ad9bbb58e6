// `serve` logs a promise rejected with no handler and keeps serving (src/cli.ts,
// logUnhandledRejections): without it, Bun ends the process on the first one. Run in a child
// process, where an unhandled rejection really does end the process.
import { expect, test } from "bun:test";
import { join } from "node:path";

const CLI = join(import.meta.dir, "../../src/cli.ts");
const LOGGER = join(import.meta.dir, "../../src/shared/logger.ts");

function run(register: boolean) {
  const script = `
    import { logUnhandledRejections } from ${JSON.stringify(CLI)};
    import { createLogger } from ${JSON.stringify(LOGGER)};
    if (${register}) logUnhandledRejections(createLogger("info"));
    Promise.reject(Object.assign(new Error("the database went away"), { code: "ECONNRESET" }));
    setTimeout(() => console.log("still serving"), 50);
  `;
  return Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe", env: { ...process.env, NODE_ENV: "test" } });
}

test("a rejection nobody handles is logged as an error line, and the process goes on", () => {
  const r = run(true);
  const out = r.stdout.toString();
  expect(r.exitCode).toBe(0);
  expect(out).toContain("still serving");
  const line = out.split("\n").find((l) => l.includes('"unhandled rejection"'));
  expect(line).toBeDefined();
  const entry = JSON.parse(line!);
  expect(entry.level).toBe("error");
  expect(JSON.stringify(entry)).toContain("the database went away");
});

test("without it, the same rejection ends the process (what serve is protected from)", () => {
  const r = run(false);
  expect(r.exitCode).not.toBe(0);
  expect(r.stdout.toString()).not.toContain("still serving");
});
