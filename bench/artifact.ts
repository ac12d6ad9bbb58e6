// artifact: finalize + publish of a 2 GB artifact on the local storage driver.
// - Peak RSS growth of the server process across finalize + publish (VmHWM reset just before via
//   /proc/<pid>/clear_refs, cross-checked by sampling VmRSS every 10 ms); budget 64 MB, printed
//   as growth / budget (target ≤ 1). Memory must stay bounded for multi-GB artifacts (DECISIONS:
//   Releases and storage), so this is independent of the artifact size.
// - Hashing throughput: finalize (server-side SHA-256 of the stored object) vs `sha256sum` on the
//   same bytes, both from a warm page cache; target ≥ 0.5. The digests must match.
// The upload itself (PUT to the presigned local URL) is timed and reported, not targeted.
//
//   bun bench/artifact.ts       (BENCH_ARTIFACT_MB=256 for a shorter run)
import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { uniqueSlug } from "./lib/fixtures";
import { knobs, log, printFailed, printRatio, printSkipped, section, type Target } from "./lib/report";
import { procStatus, resetPeakRss, startKeyward, tempDir, type KeywardProcess } from "./lib/server";

const RSS_BUDGET_MB = 64;

/** A file of `mb` MiB: one random 1 MiB block written repeatedly (fast; content is irrelevant to hashing speed). */
function makeFile(path: string, mb: number): void {
  const block = randomBytes(1024 * 1024);
  const fd = openSync(path, "w");
  try {
    for (let i = 0; i < mb; i++) writeSync(fd, block);
  } finally {
    closeSync(fd);
  }
}

async function sha256sum(path: string): Promise<{ hex: string; seconds: number }> {
  const t0 = performance.now();
  const p = Bun.spawn(["sha256sum", path], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error("sha256sum failed");
  return { hex: out.split(/\s+/)[0]!, seconds: (performance.now() - t0) / 1000 };
}

/** Samples the server's VmRSS (and its anonymous/file-backed parts) every 10 ms; maxima in kB. */
function rssSampler(pid: number): { stop(): { rssKb: number; anonKb: number; fileKb: number } } {
  const max = { rssKb: 0, anonKb: 0, fileKb: 0 };
  const sample = () => {
    try {
      const s = procStatus(pid);
      max.rssKb = Math.max(max.rssKb, s.rssKb);
      max.anonKb = Math.max(max.anonKb, s.anonKb);
      max.fileKb = Math.max(max.fileKb, s.fileKb);
    } catch {
      // process gone: the caller reports the failure
    }
  };
  sample();
  const timer = setInterval(sample, 10);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return max;
    },
  };
}

const mb = (kb: number) => kb / 1024;

export async function main(): Promise<number> {
  const sizeMb = knobs.int("BENCH_ARTIFACT_MB", 2048, 256);
  section(`artifact: finalize + publish of a ${sizeMb} MB artifact (local driver)`);
  const dir = tempDir("artifact");
  let keyward: KeywardProcess | null = null;
  try {
    keyward = await startKeyward();
    const client = keyward.client;
    const missing = await client.missingRoutes(["productReleases", "releaseArtifacts", "artifactFinalize", "releasePublish"]);
    if (missing.length) {
      printSkipped(["artifact-rss", "artifact-hash"], `route missing: ${missing.join(", ")}`);
      return 0;
    }
    const file = join(dir, "artifact.bin");
    let t0 = performance.now();
    makeFile(file, sizeMb);
    const bytes = sizeMb * 1024 * 1024;
    log(`generated ${file} (${sizeMb} MB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const slug = uniqueSlug("artifact");
    const product = await client.createProduct({ name: `Bench ${slug}`, slug });
    const release = await client.createRelease(product.id, { version: "2.0.0", channel: "stable" });
    const artifact = await client.createArtifact(release.id, {
      platform: "linux-x64",
      filename: "big-app-2.0.0-linux-x64.tar.gz",
      contentType: "application/gzip",
      size: bytes,
    });

    const pid = keyward.pid;
    const beforeUpload = procStatus(pid);
    t0 = performance.now();
    await client.upload(artifact.upload, Bun.file(file));
    const uploadS = (performance.now() - t0) / 1000;
    const afterUpload = procStatus(pid);
    log(
      `upload (PUT to the presigned URL): ${uploadS.toFixed(1)} s, ${(sizeMb / uploadS).toFixed(0)} MB/s; server RSS ${mb(beforeUpload.rssKb).toFixed(1)} → ${mb(afterUpload.rssKb).toFixed(1)} MB (peak so far ${mb(afterUpload.hwmKb).toFixed(1)} MB)`,
    );

    const hwmReset = resetPeakRss(pid);
    const baseStatus = procStatus(pid);
    const base = baseStatus.rssKb;
    const sampler = rssSampler(pid);
    t0 = performance.now();
    const { sha256 } = await client.finalizeArtifact(artifact.id);
    const finalizeS = (performance.now() - t0) / 1000;
    t0 = performance.now();
    await client.publishRelease(release.id);
    const publishS = (performance.now() - t0) / 1000;
    const sampled = sampler.stop();
    const after = procStatus(pid);
    const peak = hwmReset ? Math.max(after.hwmKb, sampled.rssKb) : sampled.rssKb;
    const growthMb = mb(peak - base);
    log(`finalize (server-side SHA-256): ${finalizeS.toFixed(2)} s, ${(sizeMb / finalizeS).toFixed(0)} MB/s`);
    log(`publish (Ed25519 + minisign signatures): ${publishS.toFixed(2)} s, ${(sizeMb / publishS).toFixed(0)} MB/s`);
    log(
      `server RSS: ${mb(base).toFixed(1)} MB before finalize, peak ${mb(peak).toFixed(1)} MB during finalize + publish (${hwmReset ? "VmHWM reset via clear_refs + 10 ms sampling" : "10 ms sampling only: clear_refs not permitted"}), growth ${growthMb.toFixed(1)} MB`,
    );
    log(
      `  of which (sampled maxima): anonymous ${mb(baseStatus.anonKb).toFixed(1)} → ${mb(sampled.anonKb).toFixed(1)} MB, file-backed/mmap ${mb(baseStatus.fileKb).toFixed(1)} → ${mb(sampled.fileKb).toFixed(1)} MB`,
    );

    const sum = await sha256sum(file);
    log(`sha256sum: ${sum.seconds.toFixed(2)} s, ${(sizeMb / sum.seconds).toFixed(0)} MB/s`);
    if (sum.hex !== sha256.toLowerCase()) {
      printFailed("artifact-hash", `finalize sha256 ${sha256} != sha256sum ${sum.hex}`);
      return 1;
    }
    log("digest: finalize matches sha256sum");
    printRatio("artifact-rss", growthMb / RSS_BUDGET_MB, { op: "<=", value: 1 } satisfies Target);
    printRatio("artifact-hash", sum.seconds / finalizeS, { op: ">=", value: 0.5 } satisfies Target);
    return 0;
  } finally {
    await keyward?.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) process.exit(await main());
