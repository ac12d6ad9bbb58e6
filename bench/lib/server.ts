// Keyward as a separate process, the way an operator runs it: `bun src/main.ts serve` (or the compiled
// binary) on a temp DATA_DIR, bound to 127.0.0.1 on a free port. Used by the benches, the crash test
// and the soak run.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import type { Subprocess } from "bun";
import { KeywardClient, fetchTransport } from "./api";

export const ROOT = resolve(import.meta.dir, "../..");
export const BUN = process.execPath;

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `keyward-${prefix}-`));
}

/** A free TCP port on 127.0.0.1 (bind port 0, read it, release it). */
export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/**
 * Environment for a bench server. NODE_ENV=production so the service runs as it would in
 * deployment (explicit master key, no dev login); LOG_LEVEL=warn so per-request access logs (info)
 * do not dominate the figures; public rate limits and the activation brute-force lockout are set
 * to their maximum because a load generator on one address is not an attacker.
 */
export function keywardEnv(dataDir: string, port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    NODE_ENV: "production",
    ALLOW_INSECURE_BASE_URL: "true",
    HOST: "127.0.0.1",
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    RELEASE_KEY_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
    LOG_LEVEL: "warn",
    STORAGE_DRIVER: "local",
    // The limiter stays on (its cost is part of every public request) but cannot throttle wrk.
    RATE_LIMIT_PUBLIC_PER_MINUTE: "100000000",
    BF_MAX_FAILS: "1000",
    ...extra,
  };
}

export interface ProcStatus {
  rssKb: number;
  hwmKb: number;
  /** Anonymous (heap) and file-backed (mmap) parts of rssKb. */
  anonKb: number;
  fileKb: number;
}

export function procStatus(pid: number): ProcStatus {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? NaN);
  return { rssKb: field("VmRSS"), hwmKb: field("VmHWM"), anonKb: field("RssAnon"), fileKb: field("RssFile") };
}

/** Resets VmHWM to the current RSS (Linux ≥ 4.0: write "5" to clear_refs). False when not allowed. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

export async function waitForHealth(baseUrl: string, timeoutMs = 20_000, proc?: Subprocess): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = "";
  while (performance.now() < deadline) {
    if (proc && proc.exitCode !== null) throw new Error(`server exited with code ${proc.exitCode} before it was healthy`);
    try {
      const res = await fetch(`${baseUrl}/api/v1/health`);
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (e) {
      last = String(e);
    }
    await Bun.sleep(10);
  }
  throw new Error(`server at ${baseUrl} not healthy after ${timeoutMs} ms (${last})`);
}

/** `keyward api-key create --scopes admin` against the same DATA_DIR; prints the key on stdout. */
export async function createAdminKey(env: Record<string, string>, command: string[] = [BUN, "src/main.ts"]): Promise<string> {
  const proc = Bun.spawn([...command, "api-key", "create", "--scopes", "admin", "--name", "bench"], {
    cwd: ROOT,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const key = out.trim().split("\n").pop()?.trim() ?? "";
  if (code !== 0 || !key) throw new Error(`api-key create failed (exit ${code}): ${err.trim()}`);
  return key;
}

export interface KeywardProcess {
  url: string;
  port: number;
  pid: number;
  dataDir: string;
  env: Record<string, string>;
  proc: Subprocess;
  adminKey: string;
  client: KeywardClient;
  /** Text the server wrote to stderr/stdout (warnings, errors), for diagnostics. */
  output(): string;
  /** SIGTERM and wait (graceful). */
  stop(): Promise<void>;
  /** SIGKILL and wait (crash). */
  kill(): Promise<void>;
  /** stop() and remove DATA_DIR unless it was given by the caller. */
  dispose(): Promise<void>;
}

export interface StartOptions {
  /** Reuse a DATA_DIR (restart after a crash); a temp dir otherwise. */
  dataDir?: string;
  /** Full environment to reuse (same master key after a restart). */
  env?: Record<string, string>;
  extraEnv?: Record<string, string>;
  /** Executable and leading args; default `bun src/main.ts`. "serve" is appended. */
  command?: string[];
  /** Reuse an admin key instead of creating one. */
  adminKey?: string;
}

export async function startKeyward(opts: StartOptions = {}): Promise<KeywardProcess> {
  const ownDir = !opts.dataDir;
  const dataDir = opts.dataDir ?? tempDir("data");
  const port = opts.env ? Number(opts.env.PORT) : freePort();
  const env = opts.env ?? keywardEnv(dataDir, port, opts.extraEnv);
  const command = opts.command ?? [BUN, "src/main.ts"];
  const adminKey = opts.adminKey ?? (await createAdminKey(env, command));
  const proc = Bun.spawn([...command, "serve"], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  let output = "";
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) output = (output + decoder.decode(chunk)).slice(-64_000);
  };
  void drain(proc.stdout as ReadableStream<Uint8Array>);
  void drain(proc.stderr as ReadableStream<Uint8Array>);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(url, 20_000, proc);
  } catch (e) {
    proc.kill("SIGKILL");
    throw new Error(`${(e as Error).message}\n${output}`);
  }
  const signal = async (sig: "SIGTERM" | "SIGKILL") => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(sig);
    await proc.exited;
  };
  return {
    url,
    port,
    pid: proc.pid,
    dataDir,
    env,
    proc,
    adminKey,
    client: new KeywardClient(fetchTransport(url), adminKey),
    output: () => output,
    stop: () => signal("SIGTERM"),
    kill: () => signal("SIGKILL"),
    async dispose() {
      await signal("SIGTERM");
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs `fn` with batches of at most `concurrency` promises in flight. */
export async function pool<T>(count: number, concurrency: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      out[i] = await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return out;
}
