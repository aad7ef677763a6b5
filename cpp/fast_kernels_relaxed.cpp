// The products of the output-only path with relaxed SIMD's fused multiply-add, built on its own
// into attention-relaxed.wasm by Debian's clang 16 (Emscripten 3.1.6's clang 14 emits the
// proposal's old f32x4.fma opcode, which no engine accepts now). Freestanding: no libc, no
// stack, no data; the module imports the fast module's memory (env.memory) and exports the
// functions that fast_attention.cpp declares as imports under ATTN_RELAXED_IMPORTS. web/lib/fast-*
// instantiates it only where WebAssembly.validate accepts it, and links these exports in place of
// the fallback imports of cpp/relaxed_imports.js.
#include "fast_products.h"

namespace {

using attn::products::Index;

/// c + a·b with relaxed_madd: fused (one rounding) or not, as the engine chooses.
struct RelaxedMadd {
  static v128_t madd(float, v128_t a, v128_t b, v128_t c) {
    return (v128_t)__builtin_wasm_relaxed_madd_f32x4((attn::products::f32x4)a, (attn::products::f32x4)b,
                                                     (attn::products::f32x4)c);
  }
  static v128_t madd(double, v128_t a, v128_t b, v128_t c) {
    return (v128_t)__builtin_wasm_relaxed_madd_f64x2((attn::products::f64x2)a, (attn::products::f64x2)b,
                                                     (attn::products::f64x2)c);
  }
};

template <typename T>
using Relaxed = attn::products::Products<T, RelaxedMadd>;

template <typename T>
void scores(const T* q, Index d, Index rows, const T* kt, Index tw, T factor, int divide, T* s) {
  if (divide) {
    Relaxed<T>::template scores<true>(q, d, rows, kt, tw, factor, s);
  } else {
    Relaxed<T>::template scores<false>(q, d, rows, kt, tw, factor, s);
  }
}

}  // namespace

#define ATTN_EXPORT(name) extern "C" __attribute__((export_name(#name), visibility("default")))

ATTN_EXPORT(attn_relaxed_available) int attn_relaxed_available() { return 1; }

ATTN_EXPORT(attn_relaxed_scores_f32)
void attn_relaxed_scores_f32(const float* q, Index d, Index rows, const float* kt, Index tw, float factor, int divide,
                             float* s) {
  scores(q, d, rows, kt, tw, factor, divide, s);
}
ATTN_EXPORT(attn_relaxed_scores_f64)
void attn_relaxed_scores_f64(const double* q, Index d, Index rows, const double* kt, Index tw, double factor,
                             int divide, double* s) {
  scores(q, d, rows, kt, tw, factor, divide, s);
}
ATTN_EXPORT(attn_relaxed_weighted_f32)
void attn_relaxed_weighted_f32(const float* p, Index tw, Index rows, const float* v, Index vs, Index bc, float* acc,
                               Index dvp) {
  Relaxed<float>::weighted(p, tw, rows, v, vs, bc, acc, dvp);
}
ATTN_EXPORT(attn_relaxed_weighted_f64)
void attn_relaxed_weighted_f64(const double* p, Index tw, Index rows, const double* v, Index vs, Index bc, double* acc,
                               Index dvp) {
  Relaxed<double>::weighted(p, tw, rows, v, vs, bc, acc, dvp);
}
