// scale: Keyward with a million licenses (issue 26), on SQLite and, when BENCH_PG_URL or
// TEST_DATABASE_URL names a server, on PostgreSQL. Opt-in (it seeds for minutes): `bun bench/scale.ts`
// or `bun bench/run.ts scale`; `npm run bench` without names does not run it.
//
// Per engine, on one seeded dataset (bench/lib/scale-seed.ts: N licenses, one activation each, made by
// Keyward's own buildLicense/issueEffects, reused for every measurement of the run):
//   scale-verify[-pg]        verify throughput at N / at 1k (a fresh 1k dataset, same settings), ≥ 0.9
//   scale-list-<shape>[-pg]  admin list/search p50 at N / 20 ms, ≤ 1 (one line per shape in SHAPES)
//   scale-verify-admin[-pg]  verify p99 while one admin client loops on the slowest shape / idle p99, ≤ 2
//   scale-pass[-pg]          lifecycle pass with ~10 % due / 60 s, ≤ 1
//   scale-pass-idle[-pg]     the next pass, nothing due / 2 s, ≤ 1
//   scale-verify-pass[-pg]   verify p99 during the pass / idle p99, ≤ 2
//
// `bun bench/scale.ts --verify-only` runs the verify comparison alone (with BENCH_ROUNDS=10
// BENCH_SECONDS=3 on a busy machine).
// `bun bench/scale.ts --seed-only` fills the caches (below) and exits (a dataset to profile a server on).
// `bun bench/scale.ts --pass-only` runs the idle verify chunks and the two lifecycle passes alone.
//
// Knobs: BENCH_SCALE_LICENSES [1000000] (10,000,000 is optional and untested: ~17 GB per SQLite copy,
// three copies with the cache and the compare server, and about an hour of seeding per engine),
// BENCH_SCALE_SMALL [1000], BENCH_SCALE_ENGINE [both: sqlite|pg], BENCH_SCALE_CACHE [1: keep the
// seeded SQLite file under $TMPDIR/keyward-scale-cache, keyed by N, the migrations and the day],
// BENCH_SCALE_COMPARE_ENV (e.g. `SQLITE_MMAP_SIZE=0`: a third server with these settings on the N
// dataset joins the verify rounds, for a before/after in one run), BENCH_SCALE_SERVER_ENV (settings
// for every server of the run, e.g. `JOBS=false`), BENCH_SECONDS [5],
// BENCH_ROUNDS [4], BENCH_CONNECTIONS [64], BENCH_SCALE_LATENCY_CONNECTIONS [8],
// BENCH_SCALE_LIST_REQUESTS [25].
import { createHash, randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { API, ROUTES, wire } from "./lib/api";
import { knobs, loadAverage, log, median, meets, printFailed, printRatio as printRatioLine, printSkipped, section, type Target } from "./lib/report";
import { benchPgUrl, freshBenchDatabase, pgSkipReason, type BenchDatabase } from "./lib/pg";
import { createScratchDatabase } from "../test/support/pg";
import { freePort, keywardEnv, ROOT, startKeyward, tempDir, type KeywardProcess } from "./lib/server";
import { describeRun, ensureWrk, runWrk, unexpectedStatuses, type WrkResult } from "./lib/wrk";
import { seedScale, type SeedResult, type SeedSample } from "./lib/scale-seed";
import { encodeCursor } from "../src/db/cursor";

const LIST_BUDGET_MS = 20;
const T_VERIFY: Target = { op: ">=", value: 0.9 };
const T_LIST: Target = { op: "<=", value: 1 };
const T_P99: Target = { op: "<=", value: 2 };
const T_PASS: Target = { op: "<=", value: 1 };
const PASS_BUDGET_S = 60;
const IDLE_PASS_BUDGET_S = 2;

/**
 * The admin list/search shapes, one line each. `query` gets the seeded dataset's samples; a shape
 * whose parameter the server does not know (400) prints "skipped: not supported" (the filters marked
 * "new" are being added in the same issue).
 */
interface ShapeCtx {
  sample: SeedSample;
  active: SeedSample;
  withCustomer: SeedSample;
  productId: string;
  middleCursor: string | null;
  now: Date;
}
const SHAPES: { name: string; query: (c: ShapeCtx) => Record<string, string> | null }[] = [
  { name: "first-page", query: () => ({}) },
  { name: "product", query: (c) => ({ product_id: c.productId }) },
  { name: "status-active", query: () => ({ status: "active" }) },
  { name: "status-trialing", query: () => ({ status: "trialing" }) },
  { name: "middle-cursor", query: (c) => (c.middleCursor ? { cursor: c.middleCursor } : null) },
  { name: "email", query: (c) => ({ email: c.sample.email }) },
  { name: "customer-id", query: (c) => ({ external_customer_id: c.withCustomer.externalCustomerId! }) },
  { name: "search-key", query: (c) => ({ search: c.active.key }) },
  { name: "search-hint", query: (c) => ({ search: c.sample.keyHint }) },
  { name: "search-email", query: (c) => ({ search: c.sample.email }) },
  { name: "search-domain", query: (c) => ({ search: `@${c.sample.email.split("@")[1]}` }) },
  { name: "search-customer", query: (c) => ({ search: c.withCustomer.externalCustomerId! }) },
  // New filters (issue 26, admin search indexes): skipped while the server answers 400.
  { name: "email-prefix", query: (c) => ({ email_prefix: c.sample.email.slice(0, 6) }) },
  { name: "email-domain", query: (c) => ({ email_domain: c.sample.email.split("@")[1]! }) },
  { name: "created-range", query: (c) => ({ created_after: new Date(c.now.getTime() - 400 * 86400e3).toISOString(), created_before: new Date(c.now.getTime() - 300 * 86400e3).toISOString() }) },
  { name: "expiring-before", query: (c) => ({ expiring_before: new Date(c.now.getTime() + 60 * 86400e3).toISOString() }) },
];

interface Opts {
  n: number;
  small: number;
  seconds: number;
  rounds: number;
  connections: number;
  latencyConnections: number;
  listRequests: number;
  cache: boolean;
  compareEnv: Record<string, string> | null;
  /** --verify-only: the verify comparison alone (many short rounds on a busy machine). */
  verifyOnly: boolean;
  /** --pass-only: idle verify p99 and the two passes, nothing else (a pass's own before/after). */
  passOnly: boolean;
}

/** A dataset on disk (SQLite DATA_DIR) or in a scratch database, with the server env that reads it. */
interface Dataset {
  env: Record<string, string>;
  seed: SeedResult;
  dispose(): Promise<void>;
}

const MIGRATIONS_HASH = createHash("sha256")
  .update(readFileSync(join(ROOT, "src/db/migrations.gen.ts")))
  .update(readFileSync(join(ROOT, "src/db/migrations-pg.gen.ts")))
  .digest("hex")
  .slice(0, 12);

function progress(label: string) {
  let last = 0;
  return (done: number, total: number) => {
    const now = performance.now();
    if (done === total || now - last > 15_000) {
      last = now;
      log(`${label}: seeded ${done.toLocaleString("en")} / ${total.toLocaleString("en")} (load average ${loadAverage()})`);
    }
  };
}

/**
 * SQLite: a fresh DATA_DIR with N licenses. With the cache on, the seeded file is kept under
 * $TMPDIR/keyward-scale-cache/<N>-<migrations>-<UTC day>/ and copied for each run (the run's pass
 * changes its copy); the dates are relative to the seeding instant, so a cache from another day is
 * not reused (its share of due licenses would have moved).
 */
const CACHE_ROOT = join(tmpdir(), "keyward-scale-cache");
/** Smaller datasets seed in seconds; caching them would evict the expensive one (one is kept per engine). */
const CACHE_MIN_LICENSES = 100_000;
const cacheKey = (n: number) => `${n}-${MIGRATIONS_HASH}-${new Date().toISOString().slice(0, 10)}`;

async function sqliteDataset(n: number, o: Opts, label: string): Promise<Dataset> {
  const dataDir = tempDir("scale");
  const cacheDir = join(CACHE_ROOT, `sqlite-${cacheKey(n)}`);
  const useCache = o.cache && n >= CACHE_MIN_LICENSES;
  const dispose = async () => rmSync(dataDir, { recursive: true, force: true });
  if (useCache && existsSync(join(cacheDir, "seed.json"))) {
    const t0 = performance.now();
    const meta = JSON.parse(readFileSync(join(cacheDir, "seed.json"), "utf8")) as { masterKey: string; seed: SeedResult };
    copyFileSync(join(cacheDir, "keyward.db"), join(dataDir, "keyward.db"));
    log(`${label}: cached SQLite dataset ${cacheDir} (seeded in ${meta.seed.seconds.toFixed(0)} s), copied in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    return { env: keywardEnv(dataDir, freePort(), { RELEASE_KEY_ENCRYPTION_KEY: meta.masterKey }), seed: meta.seed, dispose };
  }
  const masterKey = randomBytes(32).toString("hex");
  const env = keywardEnv(dataDir, freePort(), { RELEASE_KEY_ENCRYPTION_KEY: masterKey });
  const seed = await seedScale({ env, licenses: n, onProgress: progress(label) });
  if (useCache) {
    // One cached SQLite dataset at a time (they are GBs).
    if (existsSync(CACHE_ROOT)) for (const f of readdirSync(CACHE_ROOT)) if (f.startsWith("sqlite-")) rmSync(join(CACHE_ROOT, f), { recursive: true, force: true });
    mkdirSync(cacheDir, { recursive: true });
    copyFileSync(join(dataDir, "keyward.db"), join(cacheDir, "keyward.db"));
    writeFileSync(join(cacheDir, "seed.json"), JSON.stringify({ masterKey, seed }));
  }
  return { env, seed, dispose };
}

/**
 * PostgreSQL: a scratch database with N licenses. With the cache on, the seeded database is kept
 * on the server as `kwscale_cache_<N>_<migrations>_<day>` (its seed in
 * $TMPDIR/keyward-scale-cache/pg-….json) and each run gets a copy (CREATE DATABASE … TEMPLATE).
 */
async function pgDataset(n: number, base: string, o: Opts, label: string): Promise<Dataset> {
  const useCache = o.cache && n >= CACHE_MIN_LICENSES;
  const key = cacheKey(n);
  const cacheName = `kwscale_cache_${key.replaceAll("-", "_")}`;
  const metaFile = join(CACHE_ROOT, `pg-${key}.json`);
  const scratch = (db: BenchDatabase, masterKey: string) =>
    keywardEnv(tempDir("scale"), freePort(), { RELEASE_KEY_ENCRYPTION_KEY: masterKey, DATABASE_URL: db.url, DATABASE_POOL_SIZE: "10" });
  const wrap = (db: BenchDatabase, env: Record<string, string>, seed: SeedResult): Dataset => ({
    env,
    seed,
    async dispose() {
      rmSync(env.DATA_DIR!, { recursive: true, force: true });
      await db.drop();
    },
  });
  if (useCache && existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, "utf8")) as { masterKey: string; seed: SeedResult; database: string };
    const t0 = performance.now();
    try {
      const db = await createScratchDatabase(base, `kwbench_scale_${randomBytes(5).toString("hex")}`, meta.database);
      log(`${label}: cached PostgreSQL dataset ${meta.database} (seeded in ${meta.seed.seconds.toFixed(0)} s), copied in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      return wrap(db, scratch(db, meta.masterKey), meta.seed);
    } catch (e) {
      log(`${label}: cached PostgreSQL dataset ${meta.database} unusable (${(e as Error).message}); seeding again`);
    }
  }
  const db: BenchDatabase = await freshBenchDatabase(base, `scale${n}`);
  try {
    const masterKey = randomBytes(32).toString("hex");
    const env = scratch(db, masterKey);
    const seed = await seedScale({ env, licenses: n, onProgress: progress(label) });
    if (useCache) {
      // One cached database at a time: drop the others this cache knows of, then copy this one.
      mkdirSync(CACHE_ROOT, { recursive: true });
      for (const f of readdirSync(CACHE_ROOT)) {
        if (!f.startsWith("pg-")) continue;
        const old = JSON.parse(readFileSync(join(CACHE_ROOT, f), "utf8")) as { database: string };
        await dropDatabase(base, old.database);
        rmSync(join(CACHE_ROOT, f), { force: true });
      }
      await dropDatabase(base, cacheName);
      await createScratchDatabase(base, cacheName, db.name);
      writeFileSync(metaFile, JSON.stringify({ masterKey, seed, database: cacheName }));
    }
    return wrap(db, env, seed);
  } catch (e) {
    await db.drop();
    throw e;
  }
}

async function dropDatabase(base: string, name: string): Promise<void> {
  const url = new URL(base);
  const { default: postgres } = await import("postgres");
  const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

function dirSize(dir: string): number {
  let total = 0;
  for (const f of readdirSync(dir)) {
    const s = statSync(join(dir, f));
    total += s.isFile() ? s.size : 0;
  }
  return total;
}

/** BENCH_SCALE_SERVER_ENV ("A=1 B=2"): settings for every server of the run (an experiment's knob). */
const SERVER_ENV: Record<string, string> = Object.fromEntries(
  (process.env.BENCH_SCALE_SERVER_ENV?.trim() || "").split(/\s+/).filter(Boolean).map((kv) => kv.split("=", 2) as [string, string]),
);

async function start(ds: Dataset, extra: Record<string, string> = {}): Promise<KeywardProcess> {
  const env: Record<string, string> = { ...ds.env, ...SERVER_ENV, ...extra, PORT: String(freePort()) };
  env.BASE_URL = `http://127.0.0.1:${env.PORT}`;
  return startKeyward({ dataDir: env.DATA_DIR!, env });
}

function verifyBodies(pool: SeedResult["verifyPool"], count: number): string[] {
  return pool.slice(0, count).map((p) => JSON.stringify(wire.verifyBody(p.key, p.identifier)));
}

/** Server CPU time (user + system, all threads) of a process so far, in µs (Linux /proc; USER_HZ 100). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

const verifyRun = (k: KeywardProcess, bodies: string[], durationS: number, connections: number) =>
  runWrk({ url: `${k.url}${ROUTES.verify}`, threads: 1, connections, durationS, bodies });

async function adminGet(k: KeywardProcess, path: string, timeoutMs = 120_000): Promise<{ status: number; ms: number; body: any }> {
  const t0 = performance.now();
  const res = await fetch(`${k.url}${path}`, { headers: { authorization: `Bearer ${k.adminKey}` }, timeout: false, signal: AbortSignal.timeout(timeoutMs) } as RequestInit);
  const body = await res.json().catch(() => null);
  return { status: res.status, ms: performance.now() - t0, body };
}

const listPath = (q: Record<string, string>) => `${ROUTES.adminLicenses}?${new URLSearchParams({ limit: "50", ...q })}`;

/** p50 of each list shape, one request at a time; null p50 = not supported (400 on the parameter). */
async function listShapes(k: KeywardProcess, ctx: ShapeCtx, o: Opts, engine: string) {
  const out: { name: string; path: string | null; p50: number | null; note: string }[] = [];
  for (const s of SHAPES) {
    const q = s.query(ctx);
    if (!q) {
      out.push({ name: s.name, path: null, p50: null, note: "skipped: no cursor" });
      continue;
    }
    const path = listPath(q);
    const first = await adminGet(k, path);
    if (first.status === 400 || first.status === 422) {
      out.push({ name: s.name, path: null, p50: null, note: "skipped: not supported" });
      continue;
    }
    if (first.status !== 200) throw new Error(`${s.name}: HTTP ${first.status} ${JSON.stringify(first.body)}`);
    const items = (first.body?.data?.items ?? first.body?.data ?? []) as unknown[];
    // At most listRequests requests or ~10 s per shape (a slow shape still gets at least 3).
    const times: number[] = [];
    const deadline = performance.now() + 10_000;
    while (times.length < o.listRequests && (times.length < 3 || performance.now() < deadline)) times.push((await adminGet(k, path)).ms);
    out.push({ name: s.name, path, p50: median(times), note: `${Array.isArray(items) ? items.length : "?"} rows, ${times.length} requests, max ${Math.max(...times).toFixed(1)} ms` });
  }
  log(`admin list p50 (limit 50, one client, ${engine}):`);
  for (const r of out) log(`  ${r.name.padEnd(16)} ${r.p50 === null ? r.note : `${r.p50.toFixed(2).padStart(9)} ms  (${r.note})`}`);
  return out;
}

/** A list cursor at the middle of the newest-first list: the (created_at, id) of the middle sample. */
function middleCursor(seed: SeedResult): string | null {
  const mid = seed.samples[Math.floor(seed.samples.length / 2)];
  return mid ? encodeCursor({ t: mid.createdAt, id: mid.id }) : null;
}

/** The p99 of verify in consecutive 2-second wrk chunks until `until()`; median and max of the chunks. */
async function verifyChunks(k: KeywardProcess, bodies: string[], o: Opts, until: () => boolean, minChunks = 1): Promise<{ p99s: number[]; runs: WrkResult[] }> {
  const runs: WrkResult[] = [];
  while (runs.length < minChunks || !until()) {
    try {
      runs.push(await verifyRun(k, bodies, 2, o.latencyConnections));
    } catch (e) {
      // wrk could not even connect (the server did not accept within wrk's connect timeout): a chunk
      // with no verify at all. Counted as such, once per failed run.
      runs.push({ requests: 0, durationS: 2, rps: 0, sent: 0, latencyMs: { mean: NaN, p50: NaN, p90: NaN, p99: NaN, max: NaN }, errors: { connect: 1, read: 0, write: 0, status: 0, timeout: 0 }, statuses: {}, bodies: [] });
      log(`verify chunk failed: ${(e as Error).message.split("\n").filter(Boolean).slice(-1)[0]}`);
    }
  }
  // A chunk in which no verify completed (the event loop held by something else for the whole chunk)
  // has no latency figures: its p99 is at least the chunk's length.
  return { p99s: runs.map((r) => (r.requests === 0 || !Number.isFinite(r.latencyMs.p99) || r.latencyMs.p99 === 0 ? r.durationS * 1000 : r.latencyMs.p99)), runs };
}

/** POST run-expiry-checks: 200 with counts, or 202 with a job to poll until it has finished. */
async function runPass(k: KeywardProcess): Promise<{ seconds: number; result: unknown }> {
  const t0 = performance.now();
  const auth = { authorization: `Bearer ${k.adminKey}` };
  // No idle limit on this request (Bun's fetch gives up after 5 minutes without a byte): a pass that
  // answers in one response may take longer than that at a million licenses.
  let res: Response;
  try {
    res = await fetch(`${k.url}${API}/admin/system/run-expiry-checks`, { method: "POST", headers: auth, timeout: false, signal: AbortSignal.timeout(3_600_000) } as RequestInit);
  } catch (e) {
    // Seen on PostgreSQL at 1M: the server closes a request that has sent nothing for 10 s (Bun.serve's
    // idleTimeout) while the pass goes on; say after how long, so the cause is plain.
    throw new Error(`run-expiry-checks: no answer, ${(e as Error).message} after ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  const body = (await res.json().catch(() => null)) as any;
  if (res.status === 200) return { seconds: (performance.now() - t0) / 1000, result: body?.data ?? body };
  if (res.status !== 202) throw new Error(`run-expiry-checks: HTTP ${res.status} ${JSON.stringify(body)}`);
  const d = body?.data ?? body ?? {};
  const loc = res.headers.get("location") ?? d.url ?? d.status_url ?? d.href ?? d.links?.self ?? (d.id ? `${API}/admin/system/jobs/${d.id}` : null);
  if (!loc) throw new Error(`run-expiry-checks: 202 without a job to poll: ${JSON.stringify(body)}`);
  const url = new URL(loc, k.url).toString();
  for (;;) {
    await Bun.sleep(100);
    const r = await fetch(url, { headers: auth });
    const j = (await r.json().catch(() => null)) as any;
    if (r.status !== 200) throw new Error(`polling ${url}: HTTP ${r.status} ${JSON.stringify(j)}`);
    const job = j?.data ?? j;
    const status = String(job?.status ?? job?.state ?? "");
    if (["failed", "error", "errored"].includes(status)) throw new Error(`lifecycle job failed: ${JSON.stringify(job)}`);
    if (["succeeded", "completed", "complete", "done", "finished", "success"].includes(status) || job?.finished_at || job?.completed_at) {
      return { seconds: (performance.now() - t0) / 1000, result: job };
    }
  }
}

function ctxFrom(seed: SeedResult, cursor: string | null): ShapeCtx {
  const s = seed.samples;
  const pick = (f: (x: SeedSample) => boolean) => s.filter(f)[Math.floor(s.filter(f).length / 2)] ?? s[0]!;
  return {
    sample: s[Math.floor(s.length / 2)]!,
    active: pick((x) => x.status === "active"),
    withCustomer: pick((x) => x.externalCustomerId !== null),
    productId: seed.products[1]?.id ?? seed.products[0]!.id,
    middleCursor: cursor,
    now: new Date(seed.now),
  };
}

async function engineRun(engine: "sqlite" | "pg", o: Opts, pgBase: string | null): Promise<number> {
  const sfx = engine === "pg" ? "-pg" : "";
  section(`scale${sfx}: ${o.n.toLocaleString("en")} licenses on ${engine === "pg" ? "PostgreSQL" : "SQLite"}`);
  const datasets: Dataset[] = [];
  const servers: KeywardProcess[] = [];
  let code = 0;
  // Exit status 0 only when every target is met (bench/run.ts reads the lines either way).
  const printRatio = (name: string, ratio: number, target: Target) => {
    printRatioLine(name, ratio, target);
    if (!meets(ratio, target)) code = 1;
  };
  const failed = (name: string, why: string) => {
    printFailed(name, why);
    code = 1;
  };
  try {
    const make = (n: number, label: string) => (engine === "pg" ? pgDataset(n, pgBase!, o, label) : sqliteDataset(n, o, label));
    const t0 = performance.now();
    const big = await make(o.n, "large");
    datasets.push(big);
    log(
      `large dataset ready in ${((performance.now() - t0) / 1000).toFixed(0)} s (seeding ${big.seed.seconds.toFixed(0)} s): ${JSON.stringify(big.seed.statuses)}, ` +
        `${big.seed.due.toLocaleString("en")} due for the lifecycle pass (${((100 * big.seed.due) / o.n).toFixed(1)} %)` +
        (engine === "sqlite" ? `, ${(dirSize(big.env.DATA_DIR!) / 2 ** 20).toFixed(0)} MB on disk` : ""),
    );
    const small = await make(o.small, "small");
    datasets.push(small);

    // The compare server (BENCH_SCALE_COMPARE_ENV) reads its own copy of the SQLite file, so the two
    // do not share a page cache, WAL or locks; on PostgreSQL it shares the database, as nodes do.
    let compareExtra: Record<string, string> | null = null;
    if (o.compareEnv) {
      compareExtra = { ...o.compareEnv };
      if (engine === "sqlite") {
        const dir = tempDir("scale-compare");
        copyFileSync(join(big.env.DATA_DIR!, "keyward.db"), join(dir, "keyward.db"));
        datasets.push({ env: {}, seed: big.seed, dispose: async () => rmSync(dir, { recursive: true, force: true }) });
        compareExtra.DATA_DIR = dir;
      }
    }
    const kBig = await start(big);
    servers.push(kBig);
    const kSmall = await start(small);
    servers.push(kSmall);
    const kCompare = compareExtra ? await start(big, compareExtra) : null;
    if (kCompare) servers.push(kCompare);
    const missing = await kBig.client.missingRoutes(["verify", "adminLicenses"]);
    if (missing.length) {
      printSkipped([`scale-verify${sfx}`], `route missing: ${missing.join(", ")}`);
      return 0;
    }

    // 1. verify throughput at N vs at the small N: the same number of distinct licenses on both.
    const poolSize = Math.min(big.seed.verifyPool.length, small.seed.verifyPool.length);
    const bBig = verifyBodies(big.seed.verifyPool, poolSize);
    const bSmall = verifyBodies(small.seed.verifyPool, poolSize);
    let heaviest: { name: string; path: string | null; p50: number | null } | undefined;
    if (!o.passOnly) {
      const sides = [
        { name: `${o.small}`, k: kSmall, bodies: bSmall, rps: [] as number[], cpu: [] as number[], runs: [] as WrkResult[] },
        { name: `${o.n}`, k: kBig, bodies: bBig, rps: [] as number[], cpu: [] as number[], runs: [] as WrkResult[] },
        ...(kCompare ? [{ name: `${o.n} ${Object.entries(o.compareEnv!).map(([a, b]) => `${a}=${b}`).join(" ")}`, k: kCompare, bodies: bBig, rps: [] as number[], cpu: [] as number[], runs: [] as WrkResult[] }] : []),
      ];
      log(`verify: ${poolSize} distinct activated licenses per side, wrk 1 thread, ${o.connections} connections, ${o.rounds} rounds × ${o.seconds} s, order flipped every round`);
      for (const s of sides) await verifyRun(s.k, s.bodies, Math.max(2, o.seconds / 2), o.connections);
      const ratios: number[][] = sides.map(() => []);
      for (let r = 0; r < o.rounds; r++) {
        const order = sides.map((_, i) => i);
        if (r % 2) order.reverse();
        for (const i of order) {
          const before = cpuMicros(sides[i]!.k.pid);
          const run = await verifyRun(sides[i]!.k, sides[i]!.bodies, o.seconds, o.connections);
          sides[i]!.cpu.push((cpuMicros(sides[i]!.k.pid) - before) / Math.max(1, run.requests));
          sides[i]!.rps.push(run.rps);
          sides[i]!.runs.push(run);
          log(describeRun(`${sides[i]!.name.padEnd(8)} #${r + 1}`, run));
        }
        for (let i = 0; i < sides.length; i++) ratios[i]!.push(sides[i]!.rps[r]! / sides[0]!.rps[r]!);
      }
      for (let i = 0; i < sides.length; i++) {
        log(`median ${sides[i]!.name}: ${median(sides[i]!.rps).toFixed(0)} req/s, server CPU ${median(sides[i]!.cpu).toFixed(1)} µs per verify${i ? `, of the small dataset ${median(ratios[i]!).toFixed(3)} (rounds ${ratios[i]!.map((x) => x.toFixed(3)).join(", ")})` : ""}`);
      }
      const bad = sides.flatMap((s) => s.runs).map((r) => unexpectedStatuses(r, [200])).filter((u) => Object.keys(u).length);
      if (bad.length) failed(`scale-verify${sfx}`, `non-200 verify responses: ${JSON.stringify(bad)}`);
      else printRatio(`scale-verify${sfx}`, median(ratios[1]!), T_VERIFY);
      if (kCompare) {
        log(`(compare server: ${sides[2]!.name} — of the small dataset ${median(ratios[2]!).toFixed(3)}, of the default settings ${median(sides[2]!.rps.map((x, i) => x / sides[1]!.rps[i]!)).toFixed(3)})`);
      }
      for (const k of [kSmall, kCompare]) if (k) await k.stop();
      if (o.verifyOnly) return code;

      // 2. admin list shapes at N.
      const ctx = ctxFrom(big.seed, middleCursor(big.seed));
      const shapes = await listShapes(kBig, ctx, o, engine);
      for (const s of shapes) {
        if (s.p50 === null) log(`scale-list-${s.name}${sfx}: ${s.note}`);
        else printRatio(`scale-list-${s.name}${sfx}`, s.p50 / LIST_BUDGET_MS, T_LIST);
      }

      heaviest = shapes.filter((s) => s.p50 !== null).sort((a, b) => b.p50! - a.p50!)[0];
    }

    // 3. verify p99 while one admin client loops on the slowest supported shape.
    const idle = await verifyChunks(kBig, bBig, o, () => true, 5);
    const idleP99 = median(idle.p99s);
    log(`verify at ${o.latencyConnections} connections, idle: p99 per 2-s chunk ${idle.p99s.map((x) => x.toFixed(2)).join(", ")} ms → ${idleP99.toFixed(2)} ms`);
    if (heaviest && !o.passOnly) {
      let stop = false;
      let adminRequests = 0;
      const loop = (async () => {
        while (!stop) {
          await adminGet(kBig, heaviest.path!, 600_000);
          adminRequests++;
        }
      })();
      const busy = await verifyChunks(kBig, bBig, o, () => true, 5);
      stop = true;
      await loop;
      const p99 = median(busy.p99s);
      log(`verify while an admin client loops on ${heaviest.name} (${adminRequests} list requests): p99 per chunk ${busy.p99s.map((x) => x.toFixed(2)).join(", ")} ms → ${p99.toFixed(2)} ms`);
      printRatio(`scale-verify-admin${sfx}`, p99 / idleP99, T_P99);
    }

    // 4. the lifecycle pass (~10 % due), verify load alongside; then a pass with nothing due.
    let passDone = false;
    const during = verifyChunks(kBig, bBig, o, () => passDone, 1);
    await Bun.sleep(200);
    let pass: { seconds: number; result: unknown } | null = null;
    try {
      pass = await runPass(kBig);
    } catch (e) {
      failed(`scale-pass${sfx}`, (e as Error).message.slice(0, 500));
    }
    passDone = true;
    const d = await during;
    if (pass) {
      log(`lifecycle pass: ${pass.seconds.toFixed(2)} s, ${JSON.stringify(pass.result)}`);
      printRatio(`scale-pass${sfx}`, pass.seconds / PASS_BUDGET_S, T_PASS);
      const p99 = median(d.p99s);
      log(`verify during the pass: p99 per chunk ${d.p99s.map((x) => x.toFixed(2)).join(", ")} ms → ${p99.toFixed(2)} ms (idle ${idleP99.toFixed(2)} ms)`);
      printRatio(`scale-verify-pass${sfx}`, p99 / idleP99, T_P99);
      try {
        const again = await runPass(kBig);
        log(`second pass: ${again.seconds.toFixed(3)} s, ${JSON.stringify(again.result)}`);
        printRatio(`scale-pass-idle${sfx}`, again.seconds / IDLE_PASS_BUDGET_S, T_PASS);
      } catch (e) {
        failed(`scale-pass-idle${sfx}`, (e as Error).message.slice(0, 500));
      }
    }
    const pb = d.runs.map((r) => unexpectedStatuses(r, [200])).filter((u) => Object.keys(u).length);
    // Licenses of the verify pool are never due, so every verify stays 200 through the pass.
    if (pb.length) failed(`scale-verify-pass${sfx}`, `non-200 verify responses during the pass: ${JSON.stringify(pb)}`);
    const warnings = kBig.output().trim();
    if (warnings) log(`server output (last lines): ${warnings.split("\n").slice(-5).join(" | ").slice(0, 800)}`);
    return code;
  } finally {
    for (const k of servers) await k.stop();
    for (const d of datasets) await d.dispose();
  }
}

export async function main(): Promise<number> {
  const compare = process.env.BENCH_SCALE_COMPARE_ENV?.trim();
  const o: Opts = {
    n: knobs.int("BENCH_SCALE_LICENSES", 1_000_000, 20_000),
    small: knobs.int("BENCH_SCALE_SMALL", 1000, 1000),
    seconds: knobs.seconds("BENCH_SECONDS", 5, 2),
    rounds: knobs.int("BENCH_ROUNDS", 4, 1),
    connections: knobs.int("BENCH_CONNECTIONS", 64, 64),
    latencyConnections: knobs.int("BENCH_SCALE_LATENCY_CONNECTIONS", 8, 8),
    listRequests: knobs.int("BENCH_SCALE_LIST_REQUESTS", 25, 5),
    cache: process.env.BENCH_SCALE_CACHE !== "0",
    verifyOnly: process.argv.includes("--verify-only"),
    passOnly: process.argv.includes("--pass-only"),
    compareEnv: compare ? Object.fromEntries(compare.split(/\s+/).map((kv) => kv.split("=", 2) as [string, string])) : null,
  };
  const only = process.env.BENCH_SCALE_ENGINE ?? (process.argv.includes("--engine") ? process.argv[process.argv.indexOf("--engine") + 1] : null);
  if (process.argv.includes("--seed-only")) {
    // Fills the cache of each engine and exits: a dataset to profile a server on.
    const pg = benchPgUrl();
    const sets = [
      ...(only !== "pg" ? [await sqliteDataset(o.n, { ...o, cache: true }, "sqlite")] : []),
      ...(only !== "sqlite" && pg ? [await pgDataset(o.n, pg, { ...o, cache: true }, "pg")] : []),
    ];
    for (const ds of sets) {
      log(`seeded: ${JSON.stringify({ ...ds.seed, verifyPool: ds.seed.verifyPool.length, samples: ds.seed.samples.length, products: undefined })}`);
      await ds.dispose();
    }
    return 0;
  }
  await ensureWrk();
  let code = 0;
  // An engine's run that throws prints FAILED and the next engine still runs.
  const guarded = async (engine: "sqlite" | "pg", pg: string | null) => {
    try {
      return await engineRun(engine, o, pg);
    } catch (e) {
      printFailed(`scale${engine === "pg" ? "-pg" : ""}`, (e as Error).message.replaceAll("\n", " ").slice(0, 400));
      return 1;
    }
  };
  if (only !== "pg") code |= await guarded("sqlite", null);
  if (only !== "sqlite") {
    const pg = benchPgUrl();
    if (pg) code |= await guarded("pg", pg);
    else printSkipped(["scale-verify-pg"], pgSkipReason);
  }
  return code;
}

if (import.meta.main) process.exit(await main());
