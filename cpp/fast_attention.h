// The output-only attention path for numbers at scale, beside the trace API of attention.h.
//
// softmax(scale · Q Kᵀ + mask) · V for one head, row-major Q (L×d_k), K (S×d_k), V (S×d_v), in
// float32 or float64. Query rows are taken in blocks and keys in tiles, with an online softmax
// (running max and sum per query row), so the L×S matrix is never stored: memory is
// O((L + S)·d) and the time per query row is linear in S.
//
// Kernels: under `__wasm_simd128__` hand-written WebAssembly SIMD128 micro-kernels (QKᵀ tile,
// fused scale-mask-softmax with a vectorised exp, weights·V); elsewhere Eigen products on the
// same tiles, as fast as a plain Eigen implementation built with -O3 -march=native.
//
// Same conventions as attn::run: causal means query i sees keys j <= i (top-left aligned when
// L != S), a keep mask hides keys where it is 0, an additive mask is added after scaling (-inf
// hides), a query row whose keys are all hidden gets an output row of zeros, and the inputs
// must be finite (an additive mask may hold -inf).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <limits>

#include "matrix.h"

namespace attn {

/// Row-major dense matrix of float or double, the layout of JS typed arrays.
template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Options of the output-only path (at most one of `scale`, `divisor`, `divisor_sqrt`). With none
/// set, QKᵀ is divided by √d_k (rounded in the working precision), as attn::run does.
struct FastOptions {
  /// Multiplies QKᵀ (NaN: not set).
  double scale = std::numeric_limits<double>::quiet_NaN();
  /// Divides QKᵀ, rounded to the working precision first (NaN: not set). Seed 003 divides by
  /// float32(√3), which rounds differently from multiplying by float32(1/√3).
  double divisor = std::numeric_limits<double>::quiet_NaN();
  /// Divides QKᵀ by √divisor_sqrt, the root taken in the working precision (NaN: not set), as
  /// attn::run's Scale::Kind::DivideBySqrt does ("1/sqrt(3)").
  double divisor_sqrt = std::numeric_limits<double>::quiet_NaN();
  bool causal = false;  ///< query i sees keys j <= i
};

/// One problem as raw row-major buffers (what the JS binding hands over). Pointers are not
/// owned; `out` must hold L·d_v values and may not overlap the inputs.
template <typename T>
struct FastProblem {
  const T* Q = nullptr;  ///< L×d_k
  const T* K = nullptr;  ///< S×d_k
  const T* V = nullptr;  ///< S×d_v
  Eigen::Index L = 0, S = 0, d_k = 0, d_v = 0;
  const T* additive_mask = nullptr;         ///< optional L×S, added to the scaled scores
  const std::uint8_t* keep_mask = nullptr;  ///< optional L×S, 0 hides the key (not with additive)
  /// These L queries are rows row_offset .. row_offset + L - 1 of a larger problem (its mask
  /// rows likewise): causal then hides keys j > row_offset + i, and errors name global rows.
  /// Lets a caller split the queries into chunks (fast.js does, so V8 can tier up in between).
  Eigen::Index row_offset = 0;
};

/// What the output-only path noticed on the way.
struct FastReport {
  Eigen::Index fully_masked_rows = 0;  ///< query rows whose keys were all hidden (output 0)
  Eigen::Index exact_rows = 0;         ///< rows whose scores overflowed, redone by the exact row path
};

/// Computes the attention output into `out` (L×d_v, row-major). Throws InputError for empty
/// or non-finite inputs, an additive mask holding NaN or +inf, a non-finite scale, a zero or
/// non-finite divisor, a divisor_sqrt that is not finite and positive, or more than one of them.
template <typename T>
FastReport fast_attention(const FastProblem<T>& problem, const FastOptions& options, T* out);

/// Eigen convenience form: returns the L×d_v output. `additive_mask` may be empty (0×0).
template <typename T>
RowMajorMatrix<T> fast_attention(const Eigen::Ref<const RowMajorMatrix<T>>& Q,
                                 const Eigen::Ref<const RowMajorMatrix<T>>& K,
                                 const Eigen::Ref<const RowMajorMatrix<T>>& V, const FastOptions& options = {},
                                 const Eigen::Ref<const RowMajorMatrix<T>>& additive_mask = RowMajorMatrix<T>());

/// Which kernels this build uses: "wasm-simd128" or "eigen".
const char* fast_attention_kernels();

extern template FastReport fast_attention<float>(const FastProblem<float>&, const FastOptions&, float*);
extern template FastReport fast_attention<double>(const FastProblem<double>&, const FastOptions&, double*);
extern template RowMajorMatrix<float> fast_attention<float>(const Eigen::Ref<const RowMajorMatrix<float>>&,
                                                            const Eigen::Ref<const RowMajorMatrix<float>>&,
                                                            const Eigen::Ref<const RowMajorMatrix<float>>&,
                                                            const FastOptions&,
                                                            const Eigen::Ref<const RowMajorMatrix<float>>&);
extern template RowMajorMatrix<double> fast_attention<double>(const Eigen::Ref<const RowMajorMatrix<double>>&,
                                                              const Eigen::Ref<const RowMajorMatrix<double>>&,
                                                              const Eigen::Ref<const RowMajorMatrix<double>>&,
                                                              const FastOptions&,
                                                              const Eigen::Ref<const RowMajorMatrix<double>>&);

namespace detail {
/// The vectorised exp of the active kernels applied to n values (for the accuracy tests).
template <typename T>
void exp_kernel(const T* in, T* out, Eigen::Index n);
}  // namespace detail

}  // namespace attn
