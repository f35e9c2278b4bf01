/** mulberry32: a tiny seeded PRNG (uniform in [0, 1)), so generated data and bench runs can be replayed exactly. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal draw from two uniform ones (Box-Muller). */
function normal(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

/**
 * Poisson(λ) from the uniform draws `r`: Knuth's product method up to `knuthUpTo`, a rounded normal above (exact
 * enough there, and its cost does not grow with λ). Simulated traffic, not a statistical test.
 */
export function poisson(r: () => number, lambda: number, knuthUpTo = 30): number {
  if (lambda <= 0) return 0;
  if (lambda > knuthUpTo) return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * normal(r)));
  const l = Math.exp(-lambda);
  let k = 0;
  let p = 1;
  do {
    k++;
    p *= r();
  } while (p > l);
  return k - 1;
}
