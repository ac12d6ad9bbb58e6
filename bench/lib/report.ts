// Output conventions shared by every bench: raw figures first, then one final line per target,
//   <name>: ratio=<x> (target <op> <y>)
// which bench/run.ts collects. A bench whose feature route is absent prints
//   <name>: SKIPPED (route missing: ...)
// and exits 0. Targets on absolute budgets (startup ms, RSS MB) are printed as measured / budget,
// so "ratio ≤ 1" means "within budget".
import { readFileSync } from "node:fs";

export interface Target {
  op: ">=" | "<=";
  value: number;
}

export function meets(ratio: number, t: Target): boolean {
  return Number.isFinite(ratio) && (t.op === ">=" ? ratio >= t.value : ratio <= t.value);
}

export function ratioLine(name: string, ratio: number, target: Target): string {
  return `${name}: ratio=${Number.isFinite(ratio) ? ratio.toFixed(3) : "NaN"} (target ${t(target)})`;
}
const t = (target: Target) => `${target.op} ${target.value}`;

export function printRatio(name: string, ratio: number, target: Target): void {
  console.log(ratioLine(name, ratio, target));
}

export function printSkipped(names: string[], why: string): void {
  for (const n of names) console.log(`${n}: SKIPPED (${why})`);
}

/** A correctness check that failed during a bench: printed, and the bench exits non-zero. */
export function printFailed(name: string, why: string): void {
  console.log(`${name}: FAILED (${why})`);
}

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function fmt(n: number, digits = 1): string {
  return n.toFixed(digits);
}

/** Bench knobs from the environment, so a quick smoke run (BENCH_QUICK=1) uses the same code. */
export const knobs = {
  quick: process.env.BENCH_QUICK === "1",
  seconds(name: string, full: number, quick: number): number {
    const v = process.env[name];
    if (v) return Number(v);
    return knobs.quick ? quick : full;
  },
  int(name: string, full: number, quick: number): number {
    return Math.round(knobs.seconds(name, full, quick));
  },
};

/** The 1/5/15-minute load averages: figures taken on a busy machine say so. */
export function loadAverage(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    return "n/a";
  }
}

export function section(title: string): void {
  console.log(`\n=== ${title} === (load average ${loadAverage()})`);
}

export function log(line: string): void {
  console.log(`  ${line}`);
}
