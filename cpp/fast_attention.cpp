// The output-only attention path: blocks of query rows × tiles of keys with an online softmax.
//
// For each block of query rows the driver keeps, per row, the running max m, the running sum l
// of exp(score - m) and the unnormalised output acc = Σ exp(score - m)·v. A new key tile
// computes its scores (scale folded in), hides what the masks hide, raises m to the tile's max,
// rescales l and acc by exp(m_old - m_new) and adds the tile's weights·V. The output row is acc/l.
// Nothing of size L×S ever exists; K is packed once, transposed per tile, so that the QKᵀ
// micro-kernel streams contiguous rows.
//
// Two kernel sets share the driver: hand-written WebAssembly SIMD128 (no FMA in SIMD128, so
// separate mul/add; a Cephes-style polynomial exp) and, everywhere else, Eigen products on the
// same tiles. Rows whose scores overflow to +inf (or NaN) are redone by an exact scalar row path
// that follows attn::run's rules (the +inf entries share the weight).
#include "fast_attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <limits>
#include <string>
#include <vector>

#include "matrix.h"
#include "scale.h"

#ifdef __wasm_simd128__
#include "fast_products.h"
#endif

namespace attn {
namespace {

using Index = Eigen::Index;

template <typename T>
constexpr T kInf = std::numeric_limits<T>::infinity();

constexpr Index round_up(Index n, Index m) { return (n + m - 1) / m * m; }

// ---- validation ----------------------------------------------------------------------------

/// Throws naming the first entry of `data` (rows×cols) for which `bad` holds.
/// `id` is the message (error.<id>) with the entry's name, row, column and value.
template <typename T, class Bad>
[[noreturn]] void report_first(const T* data, Index cols, Index n, const char* name, Bad bad, const char* id,
                               Index first_row = 0) {
  for (Index i = 0; i < n; ++i) {
    if (bad(data[i])) {
      const Index row = first_row + i / cols + 1, column = i % cols + 1;
      throw input_error(ErrorPlace{name, {}, row, column}, id,
                        {{"name", name},
                         {"row", std::to_string(row)},
                         {"column", std::to_string(column)},
                         {"value", format_number(static_cast<double>(data[i]))}});
    }
  }
  // Only called once a bad entry is known to be there.
  throw std::logic_error(std::string("report_first: no bad entry in ") + name);
}

/// The bits of a float or double, for checks that vectorise as integer operations (O(n)).
template <typename T>
using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
template <typename T>
constexpr Bits<T> kExponentBits = sizeof(T) == 4 ? Bits<T>(0x7f800000u) : Bits<T>(0x7ff0000000000000ull);
template <typename T>
constexpr Bits<T> kNegInfBits = kExponentBits<T> | (Bits<T>(1) << (8 * sizeof(T) - 1));

/// True when no value is NaN or ±inf (all exponent bits set); with `allow_neg_inf`, -inf passes.
template <typename T>
bool all_finite(const T* data, Index n, bool allow_neg_inf = false) {
  Bits<T> bad = 0;
  for (Index i = 0; i < n; ++i) {
    Bits<T> b;
    std::memcpy(&b, data + i, sizeof b);
    bad |= static_cast<Bits<T>>((b & kExponentBits<T>) == kExponentBits<T>) &
           static_cast<Bits<T>>(!allow_neg_inf || b != kNegInfBits<T>);
  }
  return bad == 0;
}

template <typename T>
void check_matrix(const T* data, Index rows, Index cols, const char* name, Index first_row = 0) {
  if (data == nullptr) throw input_error(ErrorPlace{name}, "fast-missing", {{"name", name}});
  if (!all_finite(data, rows * cols)) {
    report_first(
        data, cols, rows * cols, name, [](T x) { return !std::isfinite(x); }, "fast-not-finite", first_row);
  }
}

template <typename T>
void check_additive_mask(const T* mask, Index L, Index S, Index first_row) {
  if (all_finite(mask, L * S, true)) return;
  report_first(
      mask, S, L * S, "mask", [](T x) { return std::isnan(x) || x == kInf<T>; }, "fast-mask-entry", first_row);
}

// ---- kernels: WebAssembly SIMD128 ----------------------------------------------------------

#ifdef __wasm_simd128__

// The relaxed-SIMD products (cpp/fast_kernels_relaxed.cpp, a module of its own), reached as
// imports. Only attention-fast.wasm is built with ATTN_RELAXED_IMPORTS: cpp/relaxed_imports.js
// gives it fallback imports (available() == 0), which the loader replaces by the relaxed
// module's exports where the engine validates that module. Elsewhere linked() is constant false.
namespace relaxed {
#ifdef ATTN_RELAXED_IMPORTS
extern "C" {
int attn_relaxed_available();
void attn_relaxed_scores_f32(const float*, Index, Index, const float*, Index, float, int, float*);
void attn_relaxed_scores_f64(const double*, Index, Index, const double*, Index, double, int, double*);
void attn_relaxed_weighted_f32(const float*, Index, Index, const float*, Index, Index, float*, Index);
void attn_relaxed_weighted_f64(const double*, Index, Index, const double*, Index, Index, double*, Index);
}
/// Whether the relaxed module is linked in (asked once: the imports are fixed at instantiation).
inline bool linked() {
  static const bool available = attn_relaxed_available() != 0;
  return available;
}
inline void scores(const float* q, Index d, Index rows, const float* kt, Index tw, float f, bool divide, float* s) {
  attn_relaxed_scores_f32(q, d, rows, kt, tw, f, divide, s);
}
inline void scores(const double* q, Index d, Index rows, const double* kt, Index tw, double f, bool divide, double* s) {
  attn_relaxed_scores_f64(q, d, rows, kt, tw, f, divide, s);
}
inline void weighted(const float* p, Index tw, Index rows, const float* v, Index vs, Index bc, float* acc, Index dvp) {
  attn_relaxed_weighted_f32(p, tw, rows, v, vs, bc, acc, dvp);
}
inline void weighted(const double* p, Index tw, Index rows, const double* v, Index vs, Index bc, double* acc,
                     Index dvp) {
  attn_relaxed_weighted_f64(p, tw, rows, v, vs, bc, acc, dvp);
}
#else
constexpr bool linked() { return false; }
template <typename T>
void scores(const T*, Index, Index, const T*, Index, T, bool, T*) {}
template <typename T>
void weighted(const T*, Index, Index, const T*, Index, Index, T*, Index) {}
#endif
}  // namespace relaxed

template <typename T>
struct Simd;

template <>
struct Simd<float> {
  static constexpr Index kLanes = 4;
  static v128_t load(const float* p) { return wasm_v128_load(p); }
  static void store(float* p, v128_t v) { wasm_v128_store(p, v); }
  static v128_t splat(float x) { return wasm_f32x4_splat(x); }
  static v128_t add(v128_t a, v128_t b) { return wasm_f32x4_add(a, b); }
  static v128_t sub(v128_t a, v128_t b) { return wasm_f32x4_sub(a, b); }
  static v128_t mul(v128_t a, v128_t b) { return wasm_f32x4_mul(a, b); }
  static v128_t div(v128_t a, v128_t b) { return wasm_f32x4_div(a, b); }
  static v128_t max(v128_t a, v128_t b) { return wasm_f32x4_max(a, b); }  // NaN-propagating
  static float hmax(v128_t v) {
    v = wasm_f32x4_max(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    v = wasm_f32x4_max(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
    return wasm_f32x4_extract_lane(v, 0);
  }
  static float hsum(v128_t v) {
    v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
    return wasm_f32x4_extract_lane(v, 0);
  }

  /// e^x for x <= 88 (Cephes expf: Cody-Waite reduction by ln 2, degree-6 polynomial,
  /// 2^n through the exponent bits). Below -87.34 (where e^x leaves the normal range) and for
  /// -inf it returns 0; within range it is within 2 ulp of the rounded e^x (tested).
  static v128_t exp(v128_t x) {
    const v128_t lo = wasm_f32x4_splat(-87.3365447505531f);
    const v128_t hi = wasm_f32x4_splat(88.0f);
    const v128_t under = wasm_f32x4_lt(x, lo);
    x = wasm_f32x4_pmin(wasm_f32x4_pmax(x, lo), hi);
    const v128_t n = wasm_f32x4_nearest(wasm_f32x4_mul(x, wasm_f32x4_splat(1.44269504088896341f)));
    x = wasm_f32x4_sub(x, wasm_f32x4_mul(n, wasm_f32x4_splat(0.693359375f)));
    x = wasm_f32x4_sub(x, wasm_f32x4_mul(n, wasm_f32x4_splat(-2.12194440e-4f)));
    const v128_t z = wasm_f32x4_mul(x, x);
    v128_t y = wasm_f32x4_splat(1.9875691500e-4f);
    y = wasm_f32x4_add(wasm_f32x4_mul(y, x), wasm_f32x4_splat(1.3981999507e-3f));
    y = wasm_f32x4_add(wasm_f32x4_mul(y, x), wasm_f32x4_splat(8.3334519073e-3f));
    y = wasm_f32x4_add(wasm_f32x4_mul(y, x), wasm_f32x4_splat(4.1665795894e-2f));
    y = wasm_f32x4_add(wasm_f32x4_mul(y, x), wasm_f32x4_splat(1.6666665459e-1f));
    y = wasm_f32x4_add(wasm_f32x4_mul(y, x), wasm_f32x4_splat(5.0000001201e-1f));
    y = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(y, z), x), wasm_f32x4_splat(1.0f));
    const v128_t pow2n = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(n), wasm_i32x4_splat(127)), 23);
    return wasm_v128_andnot(wasm_f32x4_mul(y, pow2n), under);
  }
};

template <>
struct Simd<double> {
  static constexpr Index kLanes = 2;
  static v128_t load(const double* p) { return wasm_v128_load(p); }
  static void store(double* p, v128_t v) { wasm_v128_store(p, v); }
  static v128_t splat(double x) { return wasm_f64x2_splat(x); }
  static v128_t add(v128_t a, v128_t b) { return wasm_f64x2_add(a, b); }
  static v128_t sub(v128_t a, v128_t b) { return wasm_f64x2_sub(a, b); }
  static v128_t mul(v128_t a, v128_t b) { return wasm_f64x2_mul(a, b); }
  static v128_t div(v128_t a, v128_t b) { return wasm_f64x2_div(a, b); }
  static v128_t max(v128_t a, v128_t b) { return wasm_f64x2_max(a, b); }
  static double hmax(v128_t v) {
    v = wasm_f64x2_max(v, wasm_i64x2_shuffle(v, v, 1, 0));
    return wasm_f64x2_extract_lane(v, 0);
  }
  static double hsum(v128_t v) {
    v = wasm_f64x2_add(v, wasm_i64x2_shuffle(v, v, 1, 0));
    return wasm_f64x2_extract_lane(v, 0);
  }

  /// e^x for x <= 709 (Cephes exp: Cody-Waite reduction by ln 2, Padé approximant
  /// 1 + 2·P(r)/(Q(r) - P(r)), 2^n through the exponent bits). Below -708.39 (where e^x leaves
  /// the normal range) and for -inf it returns 0; within range about 1e-16 relative (tested).
  static v128_t exp(v128_t x) {
    const v128_t lo = wasm_f64x2_splat(-708.3964185322641);
    const v128_t hi = wasm_f64x2_splat(709.0);
    const v128_t under = wasm_f64x2_lt(x, lo);
    x = wasm_f64x2_pmin(wasm_f64x2_pmax(x, lo), hi);
    const v128_t n = wasm_f64x2_nearest(wasm_f64x2_mul(x, wasm_f64x2_splat(1.4426950408889634073599)));
    x = wasm_f64x2_sub(x, wasm_f64x2_mul(n, wasm_f64x2_splat(6.93145751953125e-1)));
    x = wasm_f64x2_sub(x, wasm_f64x2_mul(n, wasm_f64x2_splat(1.42860682030941723212e-6)));
    const v128_t xx = wasm_f64x2_mul(x, x);
    v128_t px = wasm_f64x2_splat(1.26177193074810590878e-4);
    px = wasm_f64x2_add(wasm_f64x2_mul(px, xx), wasm_f64x2_splat(3.02994407707441961300e-2));
    px = wasm_f64x2_add(wasm_f64x2_mul(px, xx), wasm_f64x2_splat(9.99999999999999999910e-1));
    px = wasm_f64x2_mul(px, x);
    v128_t qx = wasm_f64x2_splat(3.00198505138664455042e-6);
    qx = wasm_f64x2_add(wasm_f64x2_mul(qx, xx), wasm_f64x2_splat(2.52448340349684104192e-3));
    qx = wasm_f64x2_add(wasm_f64x2_mul(qx, xx), wasm_f64x2_splat(2.27265548208155028766e-1));
    qx = wasm_f64x2_add(wasm_f64x2_mul(qx, xx), wasm_f64x2_splat(2.00000000000000000009e0));
    v128_t y = wasm_f64x2_div(px, wasm_f64x2_sub(qx, px));
    y = wasm_f64x2_add(wasm_f64x2_add(y, y), wasm_f64x2_splat(1.0));
    const v128_t n64 = wasm_i64x2_extend_low_i32x4(wasm_i32x4_trunc_sat_f64x2_zero(n));
    const v128_t pow2n = wasm_i64x2_shl(wasm_i64x2_add(n64, wasm_i64x2_splat(1023)), 52);
    return wasm_v128_andnot(wasm_f64x2_mul(y, pow2n), under);
  }
};

/// The kernels on 128-bit vectors: the products from fast_products.h (the relaxed-SIMD module's
/// when it is linked in, see below), the softmax's exp and reductions here.
template <typename T>
struct Kernels {
  using X = Simd<T>;
  using Products = products::Products<T, products::SeparateMulAdd>;
  static constexpr Index kLanes = X::kLanes;
  static constexpr Index kPad = products::kPad<T>;  ///< tile widths are multiples of this
#ifndef ATTN_FAST_WASM_ROWS
#define ATTN_FAST_WASM_ROWS 32
#endif
#ifndef ATTN_FAST_WASM_KEYS
#define ATTN_FAST_WASM_KEYS 128
#endif
  static constexpr Index kRows = ATTN_FAST_WASM_ROWS;  ///< query rows per block
  /// Keys per tile (float32; half for float64): the packed Kᵀ tile is 32 KB at d = 64.
  static constexpr Index kKeys = ATTN_FAST_WASM_KEYS / (sizeof(T) / sizeof(float));
  static constexpr bool kPacksK = true;             ///< the QKᵀ kernel streams rows of a packed Kᵀ tile
  static constexpr bool kPadsV = true;              ///< the weights·V kernel reads whole vectors of V rows
  static constexpr bool kExpOfNegInfIsZero = true;  ///< exp(-inf) == 0 exactly
  static const char* name() { return relaxed::linked() ? "wasm-relaxed-simd" : "wasm-simd128"; }

  /// Scores of `rows` queries against a packed K tile (`keys`: d×tw, Kᵀ of the tile).
  static void scores(const T* q, Index d, Index rows, const T* keys, Index /*bc*/, Index tw, ScaleRule<T> scaling,
                     T* s) {
    if (relaxed::linked()) {
      relaxed::scores(q, d, rows, keys, tw, scaling.by, scaling.divide, s);
    } else if (scaling.divide) {
      Products::template scores<true>(q, d, rows, keys, tw, scaling.by, s);
    } else {
      Products::template scores<false>(q, d, rows, keys, tw, scaling.by, s);
    }
  }

  /// acc (rows×dvp) += p (rows×bc, row stride tw) · v (bc×dvp, row stride vs).
  static void weighted(const T* p, Index tw, Index rows, const T* v, Index vs, Index bc, Index /*dv*/, T* acc,
                       Index dvp) {
    if (relaxed::linked()) {
      relaxed::weighted(p, tw, rows, v, vs, bc, acc, dvp);
    } else {
      Products::weighted(p, tw, rows, v, vs, bc, acc, dvp);
    }
  }

  static T row_max(const T* s, Index tw) {
    v128_t m = X::splat(-kInf<T>);
    for (Index j = 0; j < tw; j += kLanes) m = X::max(m, X::load(s + j));
    return X::hmax(m);
  }

  /// s[j] = e^(s[j] - shift) in place; returns Σ s[j].
  static T exp_shifted(T* s, Index tw, T shift) {
    const v128_t vshift = X::splat(shift);
    v128_t sum = X::splat(T(0));
    for (Index j = 0; j < tw; j += kLanes) {
      const v128_t e = X::exp(X::sub(X::load(s + j), vshift));
      X::store(s + j, e);
      sum = X::add(sum, e);
    }
    return X::hsum(sum);
  }

  static void scale_row(T* a, Index n, T factor) {
    const v128_t f = X::splat(factor);
    for (Index c = 0; c < n; c += kLanes) X::store(a + c, X::mul(X::load(a + c), f));
  }

  static void exp_values(const T* in, T* out, Index n) {
    Index i = 0;
    for (; i + kLanes <= n; i += kLanes) X::store(out + i, X::exp(X::load(in + i)));
    if (i < n) {
      alignas(16) T tmp[kLanes] = {};
      for (Index k = 0; i + k < n; ++k) tmp[k] = in[i + k];
      X::store(tmp, X::exp(X::load(tmp)));
      for (Index k = 0; i + k < n; ++k) out[i + k] = tmp[k];
    }
  }
};

#else  // !__wasm_simd128__

// ---- kernels: Eigen (native, and wasm without SIMD) -----------------------------------------

template <typename T>
struct Kernels {
  using Mat = RowMajorMatrix<T>;
  using Strided = Eigen::Map<const Mat, 0, Eigen::OuterStride<>>;
  // Rows of the scores and accumulators start on Eigen's packet alignment and span whole
  // packets: otherwise Eigen peels the unaligned head and tail off as scalar exp calls (half of
  // a 64-key row with AVX-512).
  using Row = Eigen::Map<Eigen::Array<T, 1, Eigen::Dynamic>, Eigen::AlignedMax>;
  using ConstRow = Eigen::Map<const Eigen::Array<T, 1, Eigen::Dynamic>, Eigen::AlignedMax>;
  static constexpr Index kPad = EIGEN_MAX_ALIGN_BYTES >= 16 ? EIGEN_MAX_ALIGN_BYTES / sizeof(T) : 1;
  static constexpr Index kRows = 64;
  static constexpr Index kKeys = 256;
  static constexpr Index kSmallProduct = 4096;  ///< multiply-adds below which products are lazy
  static const char* name() { return "eigen"; }

  static constexpr bool kPacksK = false;  ///< Eigen's GEMM packs its operands itself
  static constexpr bool kPadsV = false;
  /// Eigen's SSE exp clamps its argument and returns a denormal for -inf: the driver zeroes
  /// hidden keys after the exp instead (a select() inside would make Eigen's exp scalar).
  static constexpr bool kExpOfNegInfIsZero = false;

  /// Scores of `rows` queries against the tile's keys (`keys`: bc×d rows of K), row stride tw.
  static void scores(const T* q, Index d, Index rows, const T* keys, Index bc, Index tw, ScaleRule<T> scaling, T* s) {
    Eigen::Map<Mat, 0, Eigen::OuterStride<>> out(s, rows, bc, Eigen::OuterStride<>(tw));
    const Eigen::Map<const Mat> queries(q, rows, d), key_rows(keys, bc, d);
    if (rows * bc * d <= kSmallProduct) {
      // Tiny tiles: Eigen's GEMM spends longer packing and choosing blocks than multiplying.
      out.noalias() = queries.lazyProduct(key_rows.transpose());
    } else {
      out.noalias() = queries * key_rows.transpose();
    }
    if (scaling.divide) {
      out /= scaling.by;
    } else {
      out *= scaling.by;
    }
  }

  static void weighted(const T* p, Index tw, Index rows, const T* v, Index vs, Index bc, Index dv, T* acc, Index dvp) {
    Eigen::Map<Mat, 0, Eigen::OuterStride<>> out(acc, rows, dv, Eigen::OuterStride<>(dvp));
    const Strided weights(p, rows, bc, Eigen::OuterStride<>(tw)), values(v, bc, dv, Eigen::OuterStride<>(vs));
    if (rows * bc * dv <= kSmallProduct) {
      out.noalias() += weights.lazyProduct(values);
    } else {
      out.noalias() += weights * values;
    }
  }

  static T row_max(const T* s, Index tw) { return ConstRow(s, tw).template maxCoeff<Eigen::PropagateNaN>(); }

  static T exp_shifted(T* s, Index tw, T shift) {
    Row row(s, tw);
    row = (row - shift).exp();
    return row.sum();
  }

  static void scale_row(T* a, Index n, T factor) { Row(a, n) *= factor; }

  static void exp_values(const T* in, T* out, Index n) {
    Eigen::Map<Eigen::Array<T, 1, Eigen::Dynamic>>(out, n) =
        Eigen::Map<const Eigen::Array<T, 1, Eigen::Dynamic>>(in, n).exp();
    for (Index i = 0; i < n; ++i) out[i] = in[i] == -kInf<T> ? T(0) : out[i];
  }

  static T sum(const T* s, Index n) { return ConstRow(s, n).sum(); }
};

#endif  // __wasm_simd128__

// ---- the exact row path ----------------------------------------------------------------------

/// One query row computed as attn::run does (all S scores, then the softmax), for rows whose
/// scores overflowed: a +inf score shares the weight with the other +inf scores, NaN spreads.
template <typename T>
void exact_row(const FastProblem<T>& p, ScaleRule<T> scaling, bool causal, Index i, T* out, FastReport& report) {
  std::vector<T> s(static_cast<size_t>(p.S));
  const T* q = p.Q + i * p.d_k;
  for (Index j = 0; j < p.S; ++j) {
    T dot = 0;
    for (Index k = 0; k < p.d_k; ++k) dot += q[k] * p.K[j * p.d_k + k];
    T x = scaling.apply(dot);
    if (p.additive_mask) x += p.additive_mask[i * p.S + j];
    if (p.keep_mask && p.keep_mask[i * p.S + j] == 0) x = -kInf<T>;
    if (causal && j > p.row_offset + i) x = -kInf<T>;
    s[static_cast<size_t>(j)] = x;
  }
  T* o = out + i * p.d_v;
  bool any_nan = false;
  T max = -kInf<T>;
  for (T x : s) {
    any_nan |= std::isnan(x);
    max = std::max(max, x);
  }
  if (any_nan) {
    std::fill(o, o + p.d_v, std::numeric_limits<T>::quiet_NaN());
    return;
  }
  if (max == -kInf<T>) {
    std::fill(o, o + p.d_v, T(0));
    ++report.fully_masked_rows;
    return;
  }
  std::vector<T> w(s.size());
  T sum = 0;
  for (size_t j = 0; j < s.size(); ++j) {
    w[j] = max == kInf<T> ? T(s[j] == max) : std::exp(s[j] - max);
    sum += w[j];
  }
  std::fill(o, o + p.d_v, T(0));
  for (Index j = 0; j < p.S; ++j) {
    const T weight = w[static_cast<size_t>(j)] / sum;
    if (weight == 0) continue;
    for (Index c = 0; c < p.d_v; ++c) o[c] += weight * p.V[j * p.d_v + c];
  }
}

// ---- the driver ------------------------------------------------------------------------------

/// Buffers kept between calls: a fresh allocation per call costs page faults once the blocks
/// exceed malloc's trim threshold (measured: 3x slower at N = 64 natively). Large buffers are
/// released after the call so a one-off long sequence does not hold on to its memory.
template <typename T>
struct Workspace {
  std::vector<T, Eigen::aligned_allocator<T>> packed_k, padded_v, scores, acc;
  void release_if_large() {
    const size_t bytes = (packed_k.capacity() + padded_v.capacity() + scores.capacity() + acc.capacity()) * sizeof(T);
    if (bytes > (size_t{1} << 20)) *this = Workspace();
  }
};

template <typename T>
Workspace<T>& workspace() {
  static thread_local Workspace<T> w;
  return w;
}

template <typename T>
FastReport run_tiles(const FastProblem<T>& p, ScaleRule<T> scaling, bool causal, T* out) {
  using Kern = Kernels<T>;
  constexpr Index Br = Kern::kRows, Bc = Kern::kKeys, pad = Kern::kPad;
  const Index L = p.L, S = p.S, d = p.d_k, dv = p.d_v;
  const Index tiles = (S + Bc - 1) / Bc;
  const Index tw = round_up(std::min(Bc, S), pad);  // width of every packed K tile
  const Index dvp = round_up(dv, pad);

  Workspace<T>& w = workspace<T>();
  // K packed once: tile t is d×tw row-major (Kᵀ of its keys), zero beyond the last key.
  auto& packed_k = w.packed_k;
  if (Kern::kPacksK) packed_k.resize(static_cast<size_t>(tiles * d * tw));
  for (Index t = 0; Kern::kPacksK && t < tiles; ++t) {
    T* tile = packed_k.data() + t * d * tw;
    const Index j0 = t * Bc, bc = std::min(Bc, S - j0);
    for (Index jj = 0; jj < bc; ++jj) {
      const T* key = p.K + (j0 + jj) * d;
      for (Index k = 0; k < d; ++k) tile[k * tw + jj] = key[k];
    }
    if (bc < tw) {
      for (Index k = 0; k < d; ++k) std::fill(tile + k * tw + bc, tile + (k + 1) * tw, T(0));
    }
  }
  // V is used in place unless its rows need padding to the vector width.
  const T* values = p.V;
  Index vs = dv;
  if (Kern::kPadsV && dvp != dv) {
    w.padded_v.assign(static_cast<size_t>(S * dvp), T(0));
    for (Index j = 0; j < S; ++j) std::copy(p.V + j * dv, p.V + (j + 1) * dv, w.padded_v.data() + j * dvp);
    values = w.padded_v.data();
    vs = dvp;
  }

  auto& scores = w.scores;
  auto& acc = w.acc;
  scores.resize(static_cast<size_t>(Br * tw));
  acc.resize(static_cast<size_t>(Br * dvp));
  T running_max[Br], running_sum[Br];
  bool overflowed[Br];
  FastReport report;

  for (Index i0 = 0; i0 < L; i0 += Br) {
    const Index rows = std::min(Br, L - i0);
    std::fill(running_max, running_max + rows, -kInf<T>);
    std::fill(running_sum, running_sum + rows, T(0));
    std::fill(overflowed, overflowed + rows, false);
    std::fill(acc.begin(), acc.begin() + rows * dvp, T(0));
    // Causal: no key after the block's last query row is ever seen.
    const Index key_end = causal ? std::min(S, p.row_offset + i0 + rows) : S;

    for (Index t = 0; t * Bc < key_end; ++t) {
      const Index j0 = t * Bc, bc = std::min(Bc, S - j0);
      const T* keys = Kern::kPacksK ? packed_k.data() + t * d * tw : p.K + j0 * d;
      Kern::scores(p.Q + i0 * d, d, rows, keys, bc, tw, scaling, scores.data());

      for (Index r = 0; r < rows; ++r) {
        const Index i = i0 + r;
        T* s = scores.data() + r * tw;
        const Index seen = causal ? std::clamp<Index>(p.row_offset + i - j0 + 1, 0, bc) : bc;
        if (p.additive_mask) {
          const T* m = p.additive_mask + i * S + j0;
          for (Index j = 0; j < seen; ++j) s[j] += m[j];
        } else if (p.keep_mask) {
          const std::uint8_t* m = p.keep_mask + i * S + j0;
          for (Index j = 0; j < seen; ++j) s[j] = m[j] ? s[j] : -kInf<T>;
        }
        std::fill(s + seen, s + tw, -kInf<T>);  // causal, and the padding of the last tile

        const T tile_max = seen > 0 ? Kern::row_max(s, tw) : -kInf<T>;
        if (!(tile_max < kInf<T>) || tile_max == -kInf<T>) {
          // Nothing visible in this tile (or overflow, redone exactly): weights 0 here.
          overflowed[r] = overflowed[r] || tile_max != -kInf<T>;
          std::fill(s, s + tw, T(0));
          continue;
        }
        const T new_max = std::max(running_max[r], tile_max);
        const T correction = std::exp(running_max[r] - new_max);  // 0 on the first visible tile
        T tile_sum;
        if constexpr (Kern::kExpOfNegInfIsZero) {
          tile_sum = Kern::exp_shifted(s, tw, new_max);
        } else {
          Kern::exp_shifted(s, tw, new_max);  // whole packets; the hidden tail is zeroed next
          std::fill(s + seen, s + tw, T(0));
          if (p.additive_mask) {
            const T* m = p.additive_mask + i * S + j0;
            for (Index j = 0; j < seen; ++j) s[j] = m[j] == -kInf<T> ? T(0) : s[j];
          } else if (p.keep_mask) {
            const std::uint8_t* m = p.keep_mask + i * S + j0;
            for (Index j = 0; j < seen; ++j) s[j] = m[j] ? s[j] : T(0);
          }
          tile_sum = Kern::sum(s, seen);
        }
        running_sum[r] = running_sum[r] * correction + tile_sum;
        if (correction != T(1)) Kern::scale_row(acc.data() + r * dvp, dvp, correction);
        running_max[r] = new_max;
      }
      Kern::weighted(scores.data(), tw, rows, values + j0 * vs, vs, bc, dv, acc.data(), dvp);
    }

    for (Index r = 0; r < rows; ++r) {
      const Index i = i0 + r;
      T* o = out + i * dv;
      if (overflowed[r]) {
        ++report.exact_rows;
        exact_row(p, scaling, causal, i, out, report);
      } else if (running_sum[r] == T(0)) {
        std::fill(o, o + dv, T(0));
        ++report.fully_masked_rows;
      } else {
        const T* a = acc.data() + r * dvp;
        const T sum = running_sum[r];
        for (Index c = 0; c < dv; ++c) o[c] = a[c] / sum;
      }
    }
  }
  w.release_if_large();
  return report;
}

}  // namespace

template <typename T>
FastReport fast_attention(const FastProblem<T>& p, const FastOptions& options, T* out) {
  if (p.L < 1 || p.S < 1 || p.d_k < 1 || p.d_v < 1) {
    throw input_error(ErrorPlace(), "fast-empty",
                      {{"L", std::to_string(p.L)},
                       {"S", std::to_string(p.S)},
                       {"d_k", std::to_string(p.d_k)},
                       {"d_v", std::to_string(p.d_v)}});
  }
  if (out == nullptr) throw input_error(ErrorPlace(), "fast-no-output");
  if (p.additive_mask && p.keep_mask) {
    throw input_error(ErrorPlace(), "fast-masks-both");
  }
  if (p.row_offset < 0) throw input_error(ErrorPlace(), "fast-row-offset");
  check_matrix(p.Q, p.L, p.d_k, "Q", p.row_offset);
  check_matrix(p.K, p.S, p.d_k, "K");
  check_matrix(p.V, p.S, p.d_v, "V");
  if (p.additive_mask) check_additive_mask(p.additive_mask, p.L, p.S, p.row_offset);
  const bool has_scale = !std::isnan(options.scale), has_divisor = !std::isnan(options.divisor);
  const bool has_root = !std::isnan(options.divisor_sqrt);
  if (has_scale + has_divisor + has_root > 1) throw input_error(ErrorPlace(), "fast-scale-both");
  if (has_scale && !std::isfinite(options.scale)) {
    throw input_error(ErrorPlace{"options.scale"}, "fast-scale-finite", {{"value", format_number(options.scale)}});
  }
  if (has_divisor && (!std::isfinite(options.divisor) || options.divisor == 0)) {
    throw input_error(ErrorPlace{"options.scale"}, "fast-scale-divisor", {{"value", format_number(options.divisor)}});
  }
  // n in the working precision must be finite and positive (float32 turns 1e-50 into 0).
  const T root_of = static_cast<T>(options.divisor_sqrt);
  if (has_root && !(std::isfinite(root_of) && root_of > 0)) {
    throw input_error(ErrorPlace{"options.scale"}, "fast-scale-root", {{"value", format_number(options.divisor_sqrt)}});
  }
  const Scale scale = has_scale     ? Scale{Scale::Kind::Multiply, options.scale}
                      : has_divisor ? Scale{Scale::Kind::DivideBy, options.divisor}
                      : has_root    ? Scale{Scale::Kind::DivideBySqrt, options.divisor_sqrt}
                                    : Scale{};
  ScaleRule<T> scaling = scale_rule<T>(scale, p.d_k);
  int exponent = 0;
  if (scaling.divide && std::abs(std::frexp(scaling.by, &exponent)) == T(0.5)) {
    scaling = {false, T(1) / scaling.by};  // a power of two: the exact multiplication, the same numbers
  }
  return run_tiles<T>(p, scaling, options.causal, out);
}

template <typename T>
RowMajorMatrix<T> fast_attention(const Eigen::Ref<const RowMajorMatrix<T>>& Q,
                                 const Eigen::Ref<const RowMajorMatrix<T>>& K,
                                 const Eigen::Ref<const RowMajorMatrix<T>>& V, const FastOptions& options,
                                 const Eigen::Ref<const RowMajorMatrix<T>>& additive_mask) {
  if (Q.cols() != K.cols()) {
    throw input_error(ErrorPlace{"K", "Q"}, "fast-qk-width",
                      {{"q", std::to_string(Q.cols())}, {"k", std::to_string(K.cols())}});
  }
  if (K.rows() != V.rows()) {
    throw input_error(ErrorPlace{"V", "K"}, "fast-kv-rows",
                      {{"k", std::to_string(K.rows())}, {"v", std::to_string(V.rows())}});
  }
  const bool has_mask = additive_mask.size() > 0;
  if (has_mask && (additive_mask.rows() != Q.rows() || additive_mask.cols() != K.rows())) {
    throw input_error(ErrorPlace{"options.mask"}, "fast-mask-shape",
                      {{"shape", std::to_string(additive_mask.rows()) + "x" + std::to_string(additive_mask.cols())},
                       {"scores", std::to_string(Q.rows()) + "x" + std::to_string(K.rows())}});
  }
  // A Ref of a row-major matrix may still have an outer stride; the kernels want dense rows, so
  // only such inputs are copied.
  RowMajorMatrix<T> copies[4];
  auto dense = [&](const Eigen::Ref<const RowMajorMatrix<T>>& m, int slot) -> const T* {
    if (m.outerStride() == m.cols()) return m.data();
    copies[slot] = m;
    return copies[slot].data();
  };
  FastProblem<T> p;
  p.Q = dense(Q, 0);
  p.K = dense(K, 1);
  p.V = dense(V, 2);
  p.L = Q.rows();
  p.S = K.rows();
  p.d_k = Q.cols();
  p.d_v = V.cols();
  p.additive_mask = has_mask ? dense(additive_mask, 3) : nullptr;
  RowMajorMatrix<T> out(p.L, p.d_v);
  fast_attention<T>(p, options, out.data());
  return out;
}

const char* fast_attention_kernels() { return Kernels<float>::name(); }

namespace detail {
template <typename T>
void exp_kernel(const T* in, T* out, Eigen::Index n) {
  Kernels<T>::exp_values(in, out, n);
}
template void exp_kernel<float>(const float*, float*, Eigen::Index);
template void exp_kernel<double>(const double*, double*, Eigen::Index);
}  // namespace detail

template FastReport fast_attention<float>(const FastProblem<float>&, const FastOptions&, float*);
template FastReport fast_attention<double>(const FastProblem<double>&, const FastOptions&, double*);
template RowMajorMatrix<float> fast_attention<float>(const Eigen::Ref<const RowMajorMatrix<float>>&,
                                                     const Eigen::Ref<const RowMajorMatrix<float>>&,
                                                     const Eigen::Ref<const RowMajorMatrix<float>>&, const FastOptions&,
                                                     const Eigen::Ref<const RowMajorMatrix<float>>&);
template RowMajorMatrix<double> fast_attention<double>(const Eigen::Ref<const RowMajorMatrix<double>>&,
                                                       const Eigen::Ref<const RowMajorMatrix<double>>&,
                                                       const Eigen::Ref<const RowMajorMatrix<double>>&,
                                                       const FastOptions&,
                                                       const Eigen::Ref<const RowMajorMatrix<double>>&);

}  // namespace attn
