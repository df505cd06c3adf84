// Seeded, engine-independent randomness for the sandbox data. Only 32-bit integer operations and
// exact IEEE arithmetic are used (no Math.log/exp), so every engine and machine draws the same values.

/** FNV-1a over UTF-16 code units, finished with an avalanche mix so that near strings diverge. */
export function hashString(s: string, salt = 0): number {
  let h = (0x811c9dc5 ^ salt) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h);
}

/** The splitmix32 finaliser: a bijection on 32-bit integers with good avalanche. */
function mix32(x: number): number {
  let z = x | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** Combines a base seed with further integers (day number, stream id, index) into a new seed. */
export function seedOf(base: number, a: number, b = 0): number {
  return mix32(mix32(base ^ Math.imul(a | 0, 0x9e3779b1)) ^ Math.imul(b | 0, 0x632be5ab));
}

/** splitmix32: tiny, fast, and good enough for synthetic data. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed | 0;
  }

  /** Next unsigned 32-bit integer. */
  nextU32(): number {
    this.state = (this.state + 0x9e3779b9) | 0;
    return mix32(this.state);
  }

  /** Uniform in [0, 1); a 32-bit grid is plenty here. */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi] inclusive. */
  range(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** `n` decimal digits, leading zeros allowed. */
  digits(n: number): string {
    let s = "";
    while (s.length < n) s += String(this.nextU32() % 1000000000).padStart(9, "0");
    return s.slice(0, n);
  }
}
