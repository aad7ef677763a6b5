// Internal to the core: a problem after validation, and the functions the core's files share.
// Not part of the public API (attention.h is).
#pragma once

#include <optional>
#include <vector>

#include "attention.h"

namespace attn {

/// A problem brought to the rows layout (tokens as rows), validated, with its derived sizes.
/// Validation messages speak in the user's layout; everything after it works in rows.
struct Normalized {
  bool columns = false;  ///< the user's layout is Layout::Columns
  bool direct = false;   ///< Q, K, V given (else projected from X)
  bool cross = false;    ///< X_kv given: keys and values come from another sequence
  Matrix Q, K, V;                 // direct mode
  Matrix X, X_kv, W_Q, W_K, W_V;  // projection mode (X_kv = X for self-attention)
  std::optional<Vector> b_Q, b_K, b_V, b_O;
  std::optional<Matrix> W_O;
  std::optional<Matrix> mask;  // L×S
  Options options;
  int heads = 1, kv_heads = 1;
  Eigen::Index L = 0, S = 0, d_k = 0, d_v = 0;
  /// Every query's position (L of them) and every key's (S, counting cached keys first): what
  /// causal, windows, sinks, ALiBi and RoPE compare. Without a cache or options.positions,
  /// 0 ... L-1 and 0 ... S-1.
  std::vector<double> query_pos, key_pos;

  /// The key/value head query head `h` reads (grouped-query attention).
  int kv_group(int h) const { return h / (heads / kv_heads); }
};

/// Checks `problem` and brings it to the rows layout (validate.cpp). Throws InputError naming
/// the inputs that disagree, in the user's layout.
Normalized normalize(const Problem& problem);

/// Every step of the trace of a normalized problem, in its precision (attention.cpp).
Trace compute_trace(const Normalized& n);

/// The additive mask (0 or -inf, or the user's numbers) of size L×S, rows layout: the mask
/// option and causal combined (attention.cpp).
Matrix additive_mask(const Normalized& n);

}  // namespace attn
