/** A pseudo-random source in [0, 1) plus the few helpers the generators need. */
export interface SeededRandom {
  next(): number;
  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  hex(length: number): string;
}

/** FNV-1a 32-bit hash of a string: turns a card id into a PRNG seed. */
export function hashSeed(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * A deterministic PRNG (mulberry32) seeded from `seed`: the same seed always yields the same
 * sequence, on any machine, which is what makes generated histories reproducible.
 */
export function seededRandom(seed: string | number): SeededRandom {
  let state = typeof seed === 'number' ? seed >>> 0 : hashSeed(seed);
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)],
    hex: (length) => {
      let out = '';
      for (let i = 0; i < length; i += 1) out += Math.floor(next() * 16).toString(16);
      return out;
    },
  };
}

/** Rounds a money amount to cents. */
export function roundMoney(amount: number): number {
  return Math.round(amount * 100) / 100;
}
