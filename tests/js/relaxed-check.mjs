// Shared by tests/js/relaxed.test.mjs (Node) and tests/browser/relaxed.test.mjs (Chromium): loads
// attention-explorer/fast from `entryUrl` twice, with relaxed SIMD where the engine has it and with
// { relaxedSimd: false }, runs both on the same problems and returns the kernels each chose and,
// per problem, the largest |difference| between their outputs. Self-contained (no imports, no
// closures): the browser suite hands this function's source to page.evaluate.
export async function compareKernels(entryUrl) {
  const { loadFastAttention } = await import(entryUrl);
  const relaxed = await loadFastAttention();
  const simd128 = await loadFastAttention({ relaxedSimd: false });
  let seed = 7;
  const normal = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const u = (seed + 0.5) / 2147483648;
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return Math.sqrt(-2 * Math.log(u)) * Math.cos((2 * Math.PI * seed) / 2147483648);
  };
  const cases = [];
  // Sizes with every register-tile tail (L mod 4), a part-filled last key tile, d_v not a
  // multiple of the vector width, masks, causal and a divided scale.
  for (const [L, S, dk, dv] of [
    [1, 1, 1, 1],
    [7, 13, 8, 5],
    [300, 257, 64, 64],
    [1024, 1024, 64, 64],
  ]) {
    for (const [precision, Float] of [
      ['float32', Float32Array],
      ['float64', Float64Array],
    ]) {
      const Q = Float.from({ length: L * dk }, normal);
      const K = Float.from({ length: S * dk }, normal);
      const V = Float.from({ length: S * dv }, normal);
      const mask = Uint8Array.from({ length: L * S }, () => (normal() > -1 ? 1 : 0));
      for (const [what, extra] of [
        ['plain', {}],
        ['causal', { causal: true }],
        ['keep mask', { mask }],
        ['scale 1/3', { scale: '1/3' }],
      ]) {
        const input = { Q, K, V, L, S, precision, ...extra };
        const a = relaxed.attention(input).output;
        const b = simd128.attention(input).output;
        let worst = 0;
        let largest = 0;
        for (let i = 0; i < a.length; i++) {
          worst = Math.max(worst, Math.abs(a[i] - b[i]));
          largest = Math.max(largest, Math.abs(b[i]));
        }
        cases.push({
          name: `L=${L} S=${S} d_k=${dk} d_v=${dv} ${precision} ${what}`,
          precision,
          worst,
          largest,
          finite: a.every(Number.isFinite),
        });
      }
    }
  }
  return { relaxed: relaxed.fastKernels(), simd128: simd128.fastKernels(), cases };
}

/**
 * How close the relaxed products must stay to the SIMD128 ones: a fused multiply-add rounds once
 * where mul + add round twice, so the scores (|score| up to ~4 here) move by a few units in their
 * last place, the softmax weights by as much relatively, and the outputs (|values| up to ~4) with
 * them. Measured in Chromium 156 on x86-64: 2.0e-6 (float32, ~17 float32 ulp of 1) and 3.6e-15
 * (float64). The limits are 10x that and far below what a wrong tile, row or key gives (1e-2
 * and more).
 */
export const RELAXED_LIMITS = { float32: 2e-5, float64: 4e-14 };
