// wrk (Debian package) drives every throughput/latency figure: it saturates a Bun server on 2 cores,
// Node-based generators do not (STYLE: Known traps). Installed on first use when missing.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { tempDir } from "./server";

export const LUA_DIR = resolve(import.meta.dir, "../lua");

async function run(cmd: string[]): Promise<number> {
  const p = Bun.spawn(cmd, { stdout: "inherit", stderr: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  return p.exited;
}

export async function ensureWrk(): Promise<string> {
  const found = Bun.which("wrk");
  if (found) return found;
  console.log("wrk not found: installing the Debian package (apt-get install -y wrk)");
  if (!Bun.which("apt-get")) throw new Error("wrk is missing and apt-get is not available: install wrk 4.x");
  if ((await run(["apt-get", "install", "-y", "-qq", "wrk"])) !== 0) {
    await run(["apt-get", "update", "-qq"]);
    if ((await run(["apt-get", "install", "-y", "-qq", "wrk"])) !== 0) throw new Error("apt-get install wrk failed");
  }
  const installed = Bun.which("wrk");
  if (!installed) throw new Error("wrk still not on PATH after installing");
  return installed;
}

export interface WrkResult {
  requests: number;
  durationS: number;
  rps: number;
  /** Requests handed to the connection (request() calls; an upper bound of what the server saw). */
  sent: number;
  latencyMs: { mean: number; p50: number; p90: number; p99: number; max: number };
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  statuses: Record<string, number>;
  /** 2xx bodies, when keepBodies was set. */
  bodies: string[];
}

export interface WrkOptions {
  url: string;
  threads: number;
  connections: number;
  durationS: number;
  /** POST these JSON bodies in turn (one request per body, cycling). Omit for a plain GET. */
  bodies?: string[];
  keepBodies?: boolean;
}

/** Runs wrk once and returns the summary printed by bench/lua/lib.lua. */
export async function runWrk(o: WrkOptions): Promise<WrkResult> {
  const wrk = await ensureWrk();
  const dir = tempDir("wrk");
  try {
    const env: Record<string, string> = { ...(process.env as Record<string, string>), WRK_THREADS: String(o.threads) };
    let script = join(LUA_DIR, "get.lua");
    if (o.bodies) {
      script = join(LUA_DIR, "post.lua");
      const file = join(dir, "bodies.jsonl");
      writeFileSync(file, o.bodies.join("\n") + "\n");
      env.WRK_BODIES = file;
      env.WRK_PATH = new URL(o.url).pathname + new URL(o.url).search;
    }
    const keepFile = join(dir, "kept.jsonl");
    if (o.keepBodies) env.WRK_KEEP_FILE = keepFile;
    const args = [wrk, "-t", String(o.threads), "-c", String(o.connections), "-d", `${Math.max(1, Math.round(o.durationS))}s`, "--timeout", "10s", "-s", script, o.url];
    const proc = Bun.spawn(args, { env, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const line = out.split("\n").find((l) => l.startsWith("WRK_JSON "));
    if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}):\n${out}\n${err}`);
    const j = JSON.parse(line.slice("WRK_JSON ".length));
    const durationS = j.duration_us / 1e6;
    const ms = (us: number | null) => (us === null ? NaN : us / 1000);
    return {
      requests: j.requests,
      durationS,
      rps: j.requests / durationS,
      sent: j.sent,
      latencyMs: {
        mean: ms(j.latency_us.mean),
        p50: ms(j.latency_us.p50),
        p90: ms(j.latency_us.p90),
        p99: ms(j.latency_us.p99),
        max: ms(j.latency_us.max),
      },
      errors: j.errors,
      statuses: j.statuses,
      bodies: o.keepBodies && existsSync(keepFile) ? readFileSync(keepFile, "utf8").split("\n").filter(Boolean) : [],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Count of responses with a status outside `allowed`. */
export function unexpectedStatuses(r: WrkResult, allowed: number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [code, n] of Object.entries(r.statuses)) if (!allowed.includes(Number(code))) out[code] = n;
  return out;
}

export function describeRun(label: string, r: WrkResult): string {
  const st = Object.entries(r.statuses)
    .map(([c, n]) => `${c}×${n}`)
    .join(" ");
  const errs = Object.entries(r.errors)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k}=${n}`)
    .join(" ");
  return `${label}: ${r.rps.toFixed(0)} req/s, p50 ${r.latencyMs.p50.toFixed(2)} ms, p99 ${r.latencyMs.p99.toFixed(2)} ms, ${r.requests} requests [${st}]${errs ? ` errors: ${errs}` : ""}`;
}
