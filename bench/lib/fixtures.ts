// Bench fixtures created through the real admin API (so hashing, encryption and audit rows happen as
// in production), in parallel to keep setup short.
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { KeywardClient, PlanFeatureInput } from "./api";
import { BUN, ROOT, freePort, pool, waitForHealth } from "./server";

export function uniqueSlug(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString("hex")}`;
}

export interface Licensed {
  id: string;
  key: string;
}

export async function productWithPlan(
  client: KeywardClient,
  opts: { prefix: string; maxActivations: number | null; features?: PlanFeatureInput[] },
): Promise<{ productId: string; slug: string; planId: string }> {
  const slug = uniqueSlug(opts.prefix);
  const product = await client.createProduct({ name: `Bench ${slug}`, slug });
  const plan = await client.createPlan({ productId: product.id, name: `${opts.prefix} plan`, maxActivations: opts.maxActivations, features: opts.features });
  return { productId: product.id, slug, planId: plan.id };
}

export async function issueLicenses(client: KeywardClient, productId: string, planId: string, count: number): Promise<Licensed[]> {
  return pool(count, 16, (i) => client.createLicense({ productId, planId, email: `bench${i}@example.com` }));
}

/** `count` licenses, each with one activated identifier: the verify pool. */
export async function activatedPairs(client: KeywardClient, count: number): Promise<{ key: string; identifier: string; licenseId: string }[]> {
  const { productId, planId } = await productWithPlan(client, { prefix: "verify", maxActivations: 3 });
  const licenses = await issueLicenses(client, productId, planId, count);
  return pool(licenses.length, 16, async (i) => {
    const l = licenses[i]!;
    const identifier = `device-${i}-${randomBytes(4).toString("hex")}`;
    await client.activateOk(l.key, identifier);
    return { key: l.key, identifier, licenseId: l.id };
  });
}

export interface FloorProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * bench/floor-server.ts as its own process, seeded with the same license keys as Keyward; with `pg`
 * it reads from that (empty) PostgreSQL database through a pool of `pool` connections.
 */
export async function startFloor(
  pairs: { key: string; identifier: string }[],
  dir: string,
  opts: { pg?: string; pool?: number } = {},
): Promise<FloorProcess> {
  const file = join(dir, "floor-pairs.json");
  writeFileSync(file, JSON.stringify(pairs.map((p) => ({ key: p.key, identifier: p.identifier }))));
  const port = freePort();
  const pgArgs = opts.pg ? ["--pg", opts.pg, "--pool", String(opts.pool ?? 10)] : [];
  const proc: Subprocess = Bun.spawn([BUN, "bench/floor-server.ts", "--port", String(port), "--pairs", file, ...pgArgs], {
    cwd: ROOT,
    stdout: "ignore",
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, 20_000, proc);
  return {
    url,
    pid: proc.pid,
    async stop() {
      if (proc.exitCode === null) proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}
