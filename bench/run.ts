// `npm run bench`: every bench in turn, each in its own process (a crash in one does not hide the
// others), output streamed as it comes, then one summary of the ratio lines. Exit status 0 only
// when every bench ran and met its target.
//
//   npm run bench                      all benches (< 10 minutes on 2 cores)
//   bun bench/run.ts verify binary     a subset
//   bun bench/run.ts scale             opt-in: a million licenses per engine (bench/scale.ts)
//   BENCH_QUICK=1 npm run bench        short smoke run (same code, smaller sizes and durations)
import { BUN, ROOT } from "./lib/server";
import { ensureWrk } from "./lib/wrk";
import { loadAverage } from "./lib/report";

const BENCHES = ["verify", "contention", "feed", "artifact", "binary"] as const;
/** Run only when named (`bun bench/run.ts scale`): they take long (scale seeds a million licenses per engine). */
const OPT_IN = ["scale"] as const;

interface Line {
  bench: string;
  name: string;
  outcome: "PASS" | "MISS" | "SKIPPED" | "FAILED";
  text: string;
}

const RATIO = /^([\w-]+): ratio=([\d.]+|NaN) \(target (>=|<=) ([\d.]+)\)/;
const OTHER = /^([\w-]+): (SKIPPED|FAILED) \((.*)\)$/;

async function runOne(bench: string): Promise<{ lines: Line[]; code: number; seconds: number }> {
  const t0 = performance.now();
  const proc = Bun.spawn([BUN, `bench/${bench}.ts`], { cwd: ROOT, stdout: "pipe", stderr: "inherit", env: process.env });
  const lines: Line[] = [];
  let buffer = "";
  const decoder = new TextDecoder();
  const consume = (line: string) => {
    const r = RATIO.exec(line);
    if (r) {
      const [, name, ratio, op, target] = r;
      const x = Number(ratio);
      const pass = Number.isFinite(x) && (op === ">=" ? x >= Number(target) : x <= Number(target));
      lines.push({ bench, name: name!, outcome: pass ? "PASS" : "MISS", text: line });
      return;
    }
    const o = OTHER.exec(line);
    if (o) lines.push({ bench, name: o[1]!, outcome: o[2] as "SKIPPED" | "FAILED", text: line });
  };
  for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
    const text = decoder.decode(chunk, { stream: true });
    process.stdout.write(text);
    buffer += text;
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      consume(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
  }
  if (buffer) consume(buffer);
  const code = await proc.exited;
  return { lines, code, seconds: (performance.now() - t0) / 1000 };
}

async function main(): Promise<number> {
  const selected = process.argv.slice(2).length ? process.argv.slice(2) : [...BENCHES];
  const known: readonly string[] = [...BENCHES, ...OPT_IN];
  const unknown = selected.filter((b) => !known.includes(b));
  if (unknown.length) {
    console.error(`unknown bench: ${unknown.join(", ")} (known: ${known.join(", ")}; ${OPT_IN.join(", ")} only when named)`);
    return 2;
  }
  await ensureWrk();
  const cpu = (await Bun.file("/proc/cpuinfo").text()).match(/model name\s*:\s*(.*)/)?.[1] ?? "unknown CPU";
  console.log(
    `Keyward benchmarks — ${navigator.hardwareConcurrency} cores (${cpu}), Bun ${Bun.version}, load average ${loadAverage()}${process.env.BENCH_QUICK === "1" ? ", QUICK mode" : ""}`,
  );
  const t0 = performance.now();
  const all: Line[] = [];
  const crashed: string[] = [];
  const times: string[] = [];
  for (const bench of selected) {
    const { lines, code, seconds } = await runOne(bench);
    times.push(`${bench} ${seconds.toFixed(0)} s`);
    all.push(...lines);
    // A non-zero exit is a crash unless a FAILED or MISS line explains it (bench/scale.ts exits 1 on a miss).
    if (lines.length === 0 || (code !== 0 && !lines.some((l) => l.outcome === "FAILED" || l.outcome === "MISS"))) {
      crashed.push(bench);
      all.push({ bench, name: bench, outcome: "FAILED", text: `${bench}: FAILED (exit code ${code}, no result line)` });
    }
  }
  const total = (performance.now() - t0) / 1000;
  console.log(`\n=== summary (${total.toFixed(0)} s: ${times.join(", ")}) ===`);
  for (const l of all) console.log(`${l.outcome.padEnd(7)} ${l.text}`);
  const allPass = all.length > 0 && all.every((l) => l.outcome === "PASS");
  console.log(allPass ? "all targets met" : `not all targets met: ${all.filter((l) => l.outcome !== "PASS").map((l) => `${l.name} ${l.outcome}`).join(", ")}`);
  return allPass ? 0 : 1;
}

process.exit(await main());
