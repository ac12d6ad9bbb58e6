// Runs the real entry point (`bun src/main.ts`, or the compiled binary) as a child process, with a
// scrubbed environment (no NODE_ENV=test from the runner, no developer .env: cwd is a temp dir).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

export const ROOT = join(import.meta.dir, "../..");
export const MAIN = join(ROOT, "src/main.ts");

/** The default command: the test runner's own bun executing src/main.ts. */
export const BUN_MAIN = [process.execPath, MAIN];

const dirs: string[] = [];
export function tempDir(prefix = "keyward-proc-"): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}
export function removeTempDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** Only what a process needs to run; every Keyward variable comes from `env`. */
export function childEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? tmpdir(), ...env };
}

export interface RunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export function runKeyward(args: string[], opts: { env?: Record<string, string>; cwd?: string; cmd?: string[] } = {}): RunResult {
  const r = Bun.spawnSync([...(opts.cmd ?? BUN_MAIN), ...args], {
    env: childEnv(opts.env ?? {}),
    cwd: opts.cwd ?? tempDir(),
    stdout: "pipe",
    stderr: "pipe",
    timeout: 30_000,
  });
  return { exitCode: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

export interface RunningKeyward {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  port: number;
  /** Everything written to stdout/stderr so far. */
  output(): { stdout: string; stderr: string };
  /** Resolves once a stdout line contains `text`. */
  waitForLog(text: string): Promise<void>;
  exited: Promise<number>;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

/**
 * Starts `serve` on 127.0.0.1 with PORT=0 (the OS picks a free port) and resolves once the
 * "keyward listening" log line reports the URL. Rejects with the output if the process exits first.
 */
export async function startKeyward(opts: { env?: Record<string, string>; cwd?: string; cmd?: string[] } = {}): Promise<RunningKeyward> {
  const proc = Bun.spawn([...(opts.cmd ?? BUN_MAIN), "serve"], {
    env: childEnv({ HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", ...opts.env }),
    cwd: opts.cwd ?? tempDir(),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let stdout = "";
  let stderr = "";
  const waiters: { text: string; resolve: () => void }[] = [];
  const pump = async (stream: ReadableStream<Uint8Array>, onText: (s: string) => void) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) onText(decoder.decode(chunk, { stream: true }));
  };
  void pump(proc.stdout, (s) => {
    stdout += s;
    for (const w of waiters.slice()) {
      if (stdout.includes(w.text)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  void pump(proc.stderr, (s) => (stderr += s));
  const waitForLog = (text: string) =>
    new Promise<void>((resolve, reject) => {
      if (stdout.includes(text)) return resolve();
      waiters.push({ text, resolve });
      void proc.exited.then((code) =>
        reject(new Error(`keyward exited (${code}) before logging "${text}"\nstdout:\n${stdout}\nstderr:\n${stderr}`)),
      );
    });

  await waitForLog('"msg":"keyward listening"');
  const line = stdout.split("\n").find((l) => l.includes('"msg":"keyward listening"'))!;
  const url = (JSON.parse(line) as { url: string }).url;
  return {
    proc,
    url,
    port: Number(new URL(url).port),
    output: () => ({ stdout, stderr }),
    waitForLog,
    exited: proc.exited,
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null) proc.kill(signal);
      return proc.exited;
    },
  };
}

/** Polls `check` until it returns true (bounded), for conditions another process brings about. */
export async function eventually(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Bun.nanoseconds() + timeoutMs * 1e6;
  while (Bun.nanoseconds() < deadline) {
    if (await check()) return;
    await Bun.sleep(20);
  }
  throw new Error(`timed out waiting for: ${what}`);
}
