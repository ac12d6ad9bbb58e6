// Crash harness shared by test/reliability/crash.test.ts (one short cycle) and bench/soak.ts (many
// cycles): a real `bun src/main.ts serve` process on a temp DATA_DIR, concurrent activations and
// usage over HTTP, SIGKILL mid-load, restart on the same DATA_DIR, then a read-only look at the
// database. Every 2xx the clients received must be reflected in it (nothing acknowledged is lost)
// and no limit may be exceeded.
import { freePort, startKeyward, type KeywardProcess } from "../../../bench/lib/server";
import { errorCode, read, type KeywardClient } from "../../../bench/lib/api";
import { DbProbe } from "./db-probe";
import type { Rng } from "./prng";

export const MAX_ACTIVATIONS = 5;
export const CAPPED_LIMIT = 300;
export const CAPPED = "capped";
export const METERED = "metered";

interface License {
  id: string;
  key: string;
}

/** Fixtures and everything the clients were told, accumulated over cycles. */
export interface CrashWorld {
  dataDir: string;
  env: Record<string, string>;
  adminKey: string;
  limited: License[];
  unlimited: License[];
  usageLicense: License;
  /** licenseId → identifiers that got a 2xx from activate. */
  ackedActivations: Map<string, Set<string>>;
  /** licenseId → identifiers ever sent to activate. */
  attemptedActivations: Map<string, Set<string>>;
  ackedUsage: Record<string, number>;
  sentUsage: Record<string, number>;
  cycles: number;
}

export interface CycleReport {
  ackedActivations: number;
  ackedUsage: number;
  /** Requests still waiting for a response when SIGKILL was sent. */
  inFlightAtKill: number;
  /** Responses other than the expected ones (2xx, 409 limit, 429 quota). */
  unexpected: string[];
  killedAfterMs: number;
}

function add(map: Map<string, Set<string>>, licenseId: string, identifier: string) {
  let s = map.get(licenseId);
  if (!s) map.set(licenseId, (s = new Set()));
  s.add(identifier);
}

/** Starts a server on a fresh DATA_DIR and creates the fixtures through the admin API. */
export async function createWorld(): Promise<{ world: CrashWorld; server: KeywardProcess }> {
  const server = await startKeyward();
  try {
    return { server, world: await createFixtures(server) };
  } catch (e) {
    await server.dispose();
    throw e;
  }
}

async function createFixtures(server: KeywardProcess): Promise<CrashWorld> {
  const c = server.client;
  const slug = `crash-${Math.random().toString(36).slice(2, 10)}`;
  const product = await c.createProduct({ name: "Crash test", slug });
  const limitedPlan = await c.createPlan({
    productId: product.id,
    name: "limited",
    maxActivations: MAX_ACTIVATIONS,
    features: [
      { name: CAPPED, quotaLimit: CAPPED_LIMIT },
      { name: METERED, quotaLimit: 1_000_000_000 },
    ],
  });
  const unlimitedPlan = await c.createPlan({ productId: product.id, name: "unlimited", maxActivations: null });
  const issue = (planId: string, n: number) =>
    Promise.all(Array.from({ length: n }, (_, i) => c.createLicense({ productId: product.id, planId, email: `crash${i}@example.com` })));
  const limited = await issue(limitedPlan.id, 4);
  const unlimited = await issue(unlimitedPlan.id, 2);
  const [usageLicense] = await issue(limitedPlan.id, 1);
  return {
    dataDir: server.dataDir,
    env: server.env,
    adminKey: server.adminKey,
    limited,
    unlimited,
    usageLicense: usageLicense!,
    ackedActivations: new Map(),
    attemptedActivations: new Map(),
    ackedUsage: { [CAPPED]: 0, [METERED]: 0 },
    sentUsage: { [CAPPED]: 0, [METERED]: 0 },
    cycles: 0,
  };
}

/** Restarts the server on the world's DATA_DIR (same master key and admin key; a new port). */
export async function restart(world: CrashWorld): Promise<KeywardProcess> {
  const port = freePort();
  return startKeyward({
    dataDir: world.dataDir,
    env: { ...world.env, PORT: String(port), BASE_URL: `http://127.0.0.1:${port}` },
    adminKey: world.adminKey,
  });
}

/**
 * Drives `workers` activation clients and `workers` usage clients until SIGKILL, sent after
 * `killAfterMs`. Updates the world's acknowledged/attempted records.
 */
export async function loadAndKill(server: KeywardProcess, world: CrashWorld, rng: Rng, opts: { workers: number; killAfterMs: number }): Promise<CycleReport> {
  const client: KeywardClient = server.client;
  const cycle = ++world.cycles;
  const report: CycleReport = { ackedActivations: 0, ackedUsage: 0, inFlightAtKill: 0, unexpected: [], killedAfterMs: opts.killAfterMs };
  let killed = false;
  let inFlight = 0;
  const targets = [...world.limited, ...world.unlimited];

  const activationWorker = async (w: number) => {
    for (let n = 0; !killed; n++) {
      const license = targets[(w + n) % targets.length]!;
      const identifier = `c${cycle}-w${w}-n${n}`;
      add(world.attemptedActivations, license.id, identifier);
      inFlight++;
      try {
        const res = await client.activate(license.key, identifier);
        if (res.status === 200) {
          add(world.ackedActivations, license.id, identifier);
          report.ackedActivations++;
        } else if (!(res.status === 409 && errorCode(res) === "ACTIVATION_LIMIT")) {
          report.unexpected.push(`activate: HTTP ${res.status} ${res.text.slice(0, 200)}`);
        }
      } catch {
        // The connection died with the server: not acknowledged.
      } finally {
        inFlight--;
      }
    }
  };
  const usageWorker = async (w: number) => {
    while (!killed) {
      const feature = (w + world.cycles) % 2 === 0 ? CAPPED : METERED;
      const quantity = rng.int(1, 3);
      world.sentUsage[feature]! += quantity;
      inFlight++;
      try {
        const res = await client.usage(world.usageLicense.key, feature, quantity);
        if (res.status === 200) {
          // An accepted:false 200 would be a refusal that still answered 2xx; count only real acceptance.
          if (read.usage(res.json.data).accepted) {
            world.ackedUsage[feature]! += quantity;
            report.ackedUsage++;
          }
        } else if (!(res.status === 429 && errorCode(res) === "QUOTA_EXCEEDED")) {
          report.unexpected.push(`usage: HTTP ${res.status} ${res.text.slice(0, 200)}`);
        }
      } catch {
        // not acknowledged
      } finally {
        inFlight--;
      }
    }
  };

  const running = [
    ...Array.from({ length: opts.workers }, async (_, w) => await activationWorker(w)),
    ...Array.from({ length: opts.workers }, async (_, w) => await usageWorker(w)),
  ];
  await Bun.sleep(opts.killAfterMs);
  report.inFlightAtKill = inFlight;
  await server.kill();
  killed = true;
  await Promise.all(running);
  return report;
}

/**
 * Reads the database file (server stopped) and lists every violated property; [] means sound.
 * Integrity, acknowledged activations present, activations within max_activations and never
 * invented, usage counters within [acknowledged, sent] and within the quota.
 */
export function checkDatabase(world: CrashWorld, dbPath: string): string[] {
  const probe = new DbProbe(dbPath);
  try {
    const problems: string[] = [];
    const integrity = probe.integrityCheck();
    if (integrity.length !== 1 || integrity[0] !== "ok") problems.push(`integrity_check: ${integrity.slice(0, 5).join("; ")}`);
    const fk = probe.foreignKeyViolations();
    if (fk) problems.push(`foreign_key_check: ${fk} violations`);
    probe.assertSchema();

    for (const license of [...world.limited, ...world.unlimited]) {
      const stored = probe.activationIdentifiers(license.id);
      const acked = world.ackedActivations.get(license.id) ?? new Set<string>();
      const attempted = world.attemptedActivations.get(license.id) ?? new Set<string>();
      const lost = [...acked].filter((i) => !stored.has(i));
      if (lost.length) problems.push(`license ${license.id}: ${lost.length} acknowledged activations lost (${lost.slice(0, 3).join(", ")})`);
      const invented = [...stored].filter((i) => !attempted.has(i));
      if (invented.length) problems.push(`license ${license.id}: ${invented.length} activations nobody requested`);
      if (world.limited.includes(license) && stored.size > MAX_ACTIVATIONS) {
        problems.push(`license ${license.id}: ${stored.size} activations > max_activations ${MAX_ACTIVATIONS}`);
      }
    }

    for (const feature of [CAPPED, METERED]) {
      const used = probe.usageUsed(world.usageLicense.id, feature);
      const acked = world.ackedUsage[feature]!;
      const sent = world.sentUsage[feature]!;
      if (used < acked) problems.push(`usage ${feature}: counter ${used} < ${acked} acknowledged (lost increments)`);
      if (used > sent) problems.push(`usage ${feature}: counter ${used} > ${sent} ever sent (phantom increments)`);
      if (feature === CAPPED && used > CAPPED_LIMIT) problems.push(`usage ${feature}: counter ${used} > quota ${CAPPED_LIMIT}`);
    }
    return problems;
  } finally {
    probe.close();
  }
}

export function summarize(world: CrashWorld): string {
  const acked = [...world.ackedActivations.values()].reduce((n, s) => n + s.size, 0);
  return `${world.cycles} cycle(s): ${acked} acknowledged activations, usage acknowledged ${CAPPED}=${world.ackedUsage[CAPPED]}/${CAPPED_LIMIT} ${METERED}=${world.ackedUsage[METERED]}`;
}
