// Emscripten JS library of attention-fast.wasm: the imports through which fast_attention.cpp
// (built with ATTN_RELAXED_IMPORTS) reaches the relaxed-SIMD products of attention-relaxed.wasm
// (cpp/fast_kernels_relaxed.cpp). These are the fallbacks: available() is 0, so the SIMD128
// products run and the others are never called. Each carries the name of the relaxed module's
// export that replaces it: the glue minifies import names, so web/lib/relaxed.js finds them by
// this mark in the imports object and links the relaxed module's functions in their place.
var attnRelaxedImports = {
  attn_relaxed_available: function () {
    return 0;
  },
};
['attn_relaxed_scores_f32', 'attn_relaxed_scores_f64', 'attn_relaxed_weighted_f32', 'attn_relaxed_weighted_f64'].forEach(function (name) {
  attnRelaxedImports[name] = function () {
    abort('the relaxed-SIMD kernels are not linked in');
  };
});
Object.keys(attnRelaxedImports).forEach(function (name) {
  attnRelaxedImports[name + '__postset'] = '_' + name + "['relaxedKernel'] = '" + name + "';";
});
mergeInto(LibraryManager.library, attnRelaxedImports);
