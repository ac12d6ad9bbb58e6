// Test-only fault injection. The crash test (test/reliability/crash.test.ts) needs a server process
// that dies at one exact point, e.g. after an effect committed and before its response is written.
// config.ts refuses TEST_CRASH_POINT unless NODE_ENV=test, so elsewhere this is a comparison with null.
import type { Config, CrashPoint } from "../config";

export function crashPoint(config: Pick<Config, "testCrashPoint">, point: CrashPoint): void {
  // SIGKILL, not exit(): no handler, no flush, no graceful shutdown — what a power cut or OOM kill does.
  if (config.testCrashPoint === point) process.kill(process.pid, "SIGKILL");
}
