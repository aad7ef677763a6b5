// What the Node and browser benchmarks share: their inputs and their statistics. No Node imports
// (bench/browser-page.mjs loads it in Chromium).

/** Deterministic standard normal numbers (xorshift + Box-Muller). */
export function randomArray(Float, n, seed) {
  let s = (seed * 2654435761) >>> 0 || 1;
  const uniform = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return (s + 0.5) / 4294967296;
  };
  const out = new Float(n);
  for (let i = 0; i < n; i++) out[i] = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  return out;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
