// Seeded PRNG (sfc32) for reproducible fuzzing and load shapes: the seed is printed by each test and
// FUZZ_SEED replays it. Not for anything secret.

export function seedFromEnv(name = "FUZZ_SEED"): number {
  const raw = process.env[name];
  if (raw && raw.trim() !== "") {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new Error(`${name} must be an integer 0..4294967295, got "${raw}"`);
    return n;
  }
  return (Math.random() * 0x100000000) >>> 0;
}

/** A 32-bit seed for a sub-stream (e.g. one route), so each part is reproducible on its own. */
export function deriveSeed(seed: number, label: string): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(readonly seed: number) {
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    for (let i = 0; i < 15; i++) this.next();
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = Math.floor(this.next() * 256);
    return out;
  }

  hex(n: number): string {
    return Array.from(this.bytes(Math.ceil(n / 2)), (b) => b.toString(16).padStart(2, "0"))
      .join("")
      .slice(0, n);
  }

  /** Characters drawn from `alphabet`. */
  string(n: number, alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"): string {
    let s = "";
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(this.next() * alphabet.length)];
    return s;
  }
}
