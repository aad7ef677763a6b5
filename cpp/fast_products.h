// The two products of the output-only path (fast_attention.cpp) on 128-bit WebAssembly vectors:
// the scores s = q·Kᵀ (scaled) and acc += weights·V, over a block of query rows and a tile of keys.
// They are 2·L·S·d of attention's multiply-adds, so they are what a fused multiply-add speeds up.
//
// Two builds share this file, told apart by the multiply-add policy `Madd`:
//   - fast_attention.cpp (Emscripten's clang 14, -msimd128): SIMD128 has no fused multiply-add,
//     so c + a·b is a mul and an add, each rounded;
//   - fast_kernels_relaxed.cpp (Debian's clang 16, -mrelaxed-simd, freestanding): relaxed SIMD's
//     f32x4/f64x2.relaxed_madd, which the engine may fuse (one rounding) or not (two).
// Hence no Eigen and no standard library here: the relaxed build has neither.
#pragma once

#include <wasm_simd128.h>

namespace attn::products {

using Index = __PTRDIFF_TYPE__;  // Eigen::Index (std::ptrdiff_t) without <cstddef>
using f32x4 = float __attribute__((__vector_size__(16), __aligned__(16)));
using f64x2 = double __attribute__((__vector_size__(16), __aligned__(16)));

/// Query rows of the register tile: MR rows × 2 vectors of columns, i.e. 2·MR accumulators,
/// which leaves room in x86's 16 xmm registers for the operands.
#ifndef ATTN_FAST_WASM_MR
#define ATTN_FAST_WASM_MR 4
#endif
constexpr int kMr = ATTN_FAST_WASM_MR;

template <typename T>
struct Vec;

template <>
struct Vec<float> {
  static constexpr Index kLanes = 4;
  static v128_t load(const float* p) { return wasm_v128_load(p); }
  static void store(float* p, v128_t v) { wasm_v128_store(p, v); }
  static v128_t splat(float x) { return wasm_f32x4_splat(x); }
  static v128_t mul(v128_t a, v128_t b) { return wasm_f32x4_mul(a, b); }
  static v128_t div(v128_t a, v128_t b) { return wasm_f32x4_div(a, b); }
};

template <>
struct Vec<double> {
  static constexpr Index kLanes = 2;
  static v128_t load(const double* p) { return wasm_v128_load(p); }
  static void store(double* p, v128_t v) { wasm_v128_store(p, v); }
  static v128_t splat(double x) { return wasm_f64x2_splat(x); }
  static v128_t mul(v128_t a, v128_t b) { return wasm_f64x2_mul(a, b); }
  static v128_t div(v128_t a, v128_t b) { return wasm_f64x2_div(a, b); }
};

/// c + a·b as a multiply and an add (SIMD128).
struct SeparateMulAdd {
  static v128_t madd(float, v128_t a, v128_t b, v128_t c) { return wasm_f32x4_add(c, wasm_f32x4_mul(a, b)); }
  static v128_t madd(double, v128_t a, v128_t b, v128_t c) { return wasm_f64x2_add(c, wasm_f64x2_mul(a, b)); }
};

/// Tile widths (tw) and padded value widths (dvp) are multiples of 2 vectors.
template <typename T>
constexpr Index kPad = 2 * Vec<T>::kLanes;

template <typename T, class Madd>
struct Products {
  using X = Vec<T>;
  static constexpr Index kLanes = X::kLanes;
  static v128_t madd(v128_t a, v128_t b, v128_t c) { return Madd::madd(T(), a, b, c); }

  /// s (MR×tw) = q (MR×d, row stride d) · kt (d×tw, row-major), times or divided by `factor`.
  template <int MR, bool Divide>
  static void scores_rows(const T* q, Index d, const T* kt, Index tw, T factor, T* s) {
    const v128_t vfactor = X::splat(factor);
    auto scaled = [&](v128_t v) { return Divide ? X::div(v, vfactor) : X::mul(v, vfactor); };
    for (Index j = 0; j < tw; j += kPad<T>) {
      v128_t c0[MR], c1[MR];
      for (int r = 0; r < MR; ++r) c0[r] = c1[r] = wasm_f64x2_const(0.0, 0.0);
      const T* b = kt + j;
      for (Index k = 0; k < d; ++k, b += tw) {
        const v128_t b0 = X::load(b), b1 = X::load(b + kLanes);
        for (int r = 0; r < MR; ++r) {
          const v128_t a = X::splat(q[r * d + k]);
          c0[r] = madd(a, b0, c0[r]);
          c1[r] = madd(a, b1, c1[r]);
        }
      }
      for (int r = 0; r < MR; ++r) {
        X::store(s + r * tw + j, scaled(c0[r]));
        X::store(s + r * tw + j + kLanes, scaled(c1[r]));
      }
    }
  }

  /// Scores of `rows` queries (q: rows×d) against a packed K tile (kt: d×tw, Kᵀ of the tile).
  template <bool Divide>
  static void scores(const T* q, Index d, Index rows, const T* kt, Index tw, T f, T* s) {
    Index r = 0;
    for (; r + kMr <= rows; r += kMr) scores_rows<kMr, Divide>(q + r * d, d, kt, tw, f, s + r * tw);
    scores_tail<kMr - 1, Divide>(rows - r, q + r * d, d, kt, tw, f, s + r * tw);
  }

  /// The last `left` (< kMr) rows of a block, with a register tile of exactly that many rows.
  template <int MR, bool Divide>
  static void scores_tail(Index left, const T* q, Index d, const T* kt, Index tw, T f, T* s) {
    if constexpr (MR > 0) {
      if (left == MR) {
        scores_rows<MR, Divide>(q, d, kt, tw, f, s);
      } else {
        scores_tail<MR - 1, Divide>(left, q, d, kt, tw, f, s);
      }
    }
  }

  /// acc (MR×dvp) += p (MR×bc, row stride tw) · v (bc×dvp, row stride vs).
  template <int MR>
  static void weighted_rows(const T* p, Index tw, const T* v, Index vs, Index bc, T* acc, Index dvp) {
    for (Index c = 0; c < dvp; c += kPad<T>) {
      v128_t o0[MR], o1[MR];
      for (int r = 0; r < MR; ++r) {
        o0[r] = X::load(acc + r * dvp + c);
        o1[r] = X::load(acc + r * dvp + c + kLanes);
      }
      const T* vj = v + c;
      for (Index j = 0; j < bc; ++j, vj += vs) {
        const v128_t v0 = X::load(vj), v1 = X::load(vj + kLanes);
        for (int r = 0; r < MR; ++r) {
          const v128_t a = X::splat(p[r * tw + j]);
          o0[r] = madd(a, v0, o0[r]);
          o1[r] = madd(a, v1, o1[r]);
        }
      }
      for (int r = 0; r < MR; ++r) {
        X::store(acc + r * dvp + c, o0[r]);
        X::store(acc + r * dvp + c + kLanes, o1[r]);
      }
    }
  }

  /// acc (rows×dvp) += p (rows×bc, row stride tw) · v (bc×dvp, row stride vs).
  static void weighted(const T* p, Index tw, Index rows, const T* v, Index vs, Index bc, T* acc, Index dvp) {
    Index r = 0;
    for (; r + kMr <= rows; r += kMr) weighted_rows<kMr>(p + r * tw, tw, v, vs, bc, acc + r * dvp, dvp);
    weighted_tail<kMr - 1>(rows - r, p + r * tw, tw, v, vs, bc, acc + r * dvp, dvp);
  }

  template <int MR>
  static void weighted_tail(Index left, const T* p, Index tw, const T* v, Index vs, Index bc, T* acc, Index dvp) {
    if constexpr (MR > 0) {
      if (left == MR) {
        weighted_rows<MR>(p, tw, v, vs, bc, acc, dvp);
      } else {
        weighted_tail<MR - 1>(left, p, tw, v, vs, bc, acc, dvp);
      }
    }
  }
};

}  // namespace attn::products
