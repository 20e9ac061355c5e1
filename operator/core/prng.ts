// A small, fast, deterministic generator of numbers in [0, 1) from a seed (mulberry32): the demo model's weights and
// the seeded property tests (a failing case is replayed by its seed). Not for anything that must be unpredictable.
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
