// Relaxed SIMD (fused multiply-add) for attention-fast.wasm. The products with relaxed_madd are a
// module of their own (attention-relaxed.wasm, cpp/fast_kernels_relaxed.cpp, embedded here by
// scripts/build.sh as relaxed-kernels.js: a few KB, so no second URL to configure). Where the
// engine validates it (Chromium; Node 20 only with --experimental-wasm-relaxed-simd), it is
// instantiated over the fast module's memory and its exports replace the fast module's fallback
// imports (cpp/relaxed_imports.js); elsewhere the SIMD128 products run.
import relaxedKernelsBase64 from './relaxed-kernels.js';

let compiled = null;

/** The relaxed module compiled, or null where this engine has no relaxed SIMD. */
export function relaxedKernels() {
  compiled ??= (async () => {
    const bytes = Uint8Array.from(atob(relaxedKernelsBase64), (c) => c.charCodeAt(0));
    // The module itself is the feature test: valid exactly where relaxed_madd is.
    return WebAssembly.validate(bytes) ? WebAssembly.compile(bytes) : null;
  })();
  return compiled;
}

/**
 * For loadModule: links `kernels` (from relaxedKernels()) into the fast module's `imports` before
 * it is instantiated. The glue minifies import names; cpp/relaxed_imports.js marks each fallback
 * import with the export that replaces it.
 */
export function linkRelaxed(kernels) {
  return (imports) => {
    // The glue minifies the import modules' names too ("env" becomes "a"): look in all of them.
    const namespaces = Object.values(imports);
    const memory = namespaces.flatMap(Object.values).find((value) => value instanceof WebAssembly.Memory);
    if (!memory) throw new Error('attention-fast.wasm imports no memory: it was not built for the relaxed-SIMD kernels');
    const exports = new WebAssembly.Instance(kernels, { env: { memory } }).exports;
    let linked = 0;
    for (const namespace of namespaces) {
      for (const key of Object.keys(namespace)) {
        const name = namespace[key]?.relaxedKernel;
        if (name === undefined) continue;
        if (typeof exports[name] !== 'function') throw new Error(`attention-relaxed.wasm has no export ${name}`);
        namespace[key] = exports[name];
        linked += 1;
      }
    }
    if (linked === 0) throw new Error('attention-fast.wasm has no relaxed-SIMD imports to link');
  };
}
