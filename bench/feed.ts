// feed scaling: GET /releases/:slug/feed.xml?platform=linux-x64&limit=20 p50 latency for a product
// with 10,000 published releases vs one with 10, same server, alternating wrk runs. Target ≤ 1.3:
// the feed must cost what its 20 entries cost, not what the product's history costs. The ratio is
// the median of per-round p50 ratios.
//
// Seeding is honest: every release goes through the real admin workflow over HTTP (create release →
// create artifact → PUT bytes to the presigned URL → finalize → publish), with tiny artifacts and
// many requests in flight at once. The seeding time is reported.
//
//   bun bench/feed.ts            (BENCH_FEED_RELEASES=2000 for a shorter run)
import { randomBytes } from "node:crypto";
import { ROUTES, type KeywardClient } from "./lib/api";
import { uniqueSlug } from "./lib/fixtures";
import { knobs, log, median, printFailed, printRatio, printSkipped, section, type Target } from "./lib/report";
import { pool, startKeyward, type KeywardProcess } from "./lib/server";
import { describeRun, ensureWrk, runWrk, unexpectedStatuses, type WrkResult } from "./lib/wrk";

const NAME = "feed";
const TARGET: Target = { op: "<=", value: 1.3 };
const PLATFORM = "linux-x64";
const LIMIT = 20;

/** Distinct, increasing semantic versions: 0 → 1.0.0, 1 → 1.0.1, ..., 100 → 1.1.0, ... */
function version(i: number): string {
  return `1.${Math.floor(i / 100)}.${i % 100}`;
}

async function seed(client: KeywardClient, productId: string, count: number, concurrency: number): Promise<number> {
  const bytes = new Uint8Array(randomBytes(64));
  const t0 = performance.now();
  let done = 0;
  await pool(count, concurrency, async (i) => {
    await client.publishSmallRelease(productId, version(i), PLATFORM, bytes);
    done++;
    if (count >= 1000 && done % 2000 === 0) log(`  seeded ${done}/${count} releases`);
  });
  return (performance.now() - t0) / 1000;
}

function items(xml: string): number {
  return (xml.match(/<item[\s>]/g) ?? []).length;
}

export async function main(): Promise<number> {
  const seconds = knobs.seconds("BENCH_FEED_SECONDS", 5, 2);
  const rounds = knobs.int("BENCH_ROUNDS", 4, 1);
  const connections = knobs.int("BENCH_FEED_CONNECTIONS", 16, 16);
  const threads = knobs.int("BENCH_THREADS", 1, 1);
  const large = knobs.int("BENCH_FEED_RELEASES", 10_000, 1000);
  const small = 10;
  const concurrency = knobs.int("BENCH_SEED_CONCURRENCY", 32, 32);

  section(`${NAME}: feed.xml p50 latency, ${large} releases vs ${small}`);
  await ensureWrk();
  let keyward: KeywardProcess | null = null;
  try {
    keyward = await startKeyward();
    const client = keyward.client;
    const missing = await client.missingRoutes(["productReleases", "releaseArtifacts", "artifactFinalize", "releasePublish", "feedXml"]);
    if (missing.length) {
      printSkipped([NAME], `route missing: ${missing.join(", ")}`);
      return 0;
    }
    log(`keyward: bun src/main.ts serve (pid ${keyward.pid}), NODE_ENV=production, LOG_LEVEL=warn, STORAGE_DRIVER=local`);
    const product = async (prefix: string) => {
      const slug = uniqueSlug(prefix);
      return { productId: (await client.createProduct({ name: `Bench ${slug}`, slug })).id, slug };
    };
    const smallP = await product("feed-small");
    const largeP = await product("feed-large");
    await seed(client, smallP.productId, small, concurrency);
    const seedS = await seed(client, largeP.productId, large, concurrency);
    log(
      `seeded ${large} releases in ${seedS.toFixed(1)} s (${(large / seedS).toFixed(0)} releases/s, ${((large * 5) / seedS).toFixed(0)} admin requests/s, ${concurrency} in flight)`,
    );

    const smallFeed = await client.feedXml(smallP.slug, PLATFORM, LIMIT);
    const largeFeed = await client.feedXml(largeP.slug, PLATFORM, LIMIT);
    if (smallFeed.status !== 200 || largeFeed.status !== 200) {
      printFailed(NAME, `feed status small=${smallFeed.status} large=${largeFeed.status}: ${largeFeed.text.slice(0, 300)}`);
      return 1;
    }
    const [ni, nl] = [items(smallFeed.text), items(largeFeed.text)];
    log(`feed entries: small ${ni} (${smallFeed.text.length} bytes), large ${nl} (${largeFeed.text.length} bytes)`);
    if (ni !== small || nl !== LIMIT) {
      printFailed(NAME, `expected ${small} and ${LIMIT} <item> entries, got ${ni} and ${nl}`);
      return 1;
    }

    const run = (slug: string, d: number) => runWrk({ url: `${keyward!.url}${ROUTES.feedXml(slug, PLATFORM, LIMIT)}`, threads, connections, durationS: d });
    await run(smallP.slug, 1);
    await run(largeP.slug, 1);
    // ABBA order across rounds; the ratio is the median of per-round p50 ratios (adjacent runs).
    const smallRuns: WrkResult[] = [];
    const largeRuns: WrkResult[] = [];
    const pairRatios: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? (["small", "large"] as const) : (["large", "small"] as const);
      const got: Record<string, WrkResult> = {};
      for (const side of order) {
        got[side] = await run(side === "small" ? smallP.slug : largeP.slug, seconds);
        log(describeRun(`${side === "small" ? small : large} releases #${i + 1}`.padEnd(20), got[side]!));
      }
      smallRuns.push(got.small!);
      largeRuns.push(got.large!);
      pairRatios.push(got.large!.latencyMs.p50 / got.small!.latencyMs.p50);
    }
    const bad = [...smallRuns, ...largeRuns].map((r) => unexpectedStatuses(r, [200])).filter((u) => Object.keys(u).length);
    if (bad.length) {
      printFailed(NAME, `non-200 feed responses: ${JSON.stringify(bad)}`);
      return 1;
    }
    const p50s = median(smallRuns.map((r) => r.latencyMs.p50));
    const p50l = median(largeRuns.map((r) => r.latencyMs.p50));
    log(`median p50: ${small} releases ${p50s.toFixed(2)} ms, ${large} releases ${p50l.toFixed(2)} ms (${connections} connections)`);
    log(`per-round p50 ratios: ${pairRatios.map((r) => r.toFixed(3)).join(", ")}`);
    printRatio(NAME, median(pairRatios), TARGET);
    return 0;
  } finally {
    await keyward?.dispose();
  }
}

if (import.meta.main) process.exit(await main());
