// The attention core: one problem in, a trace of every intermediate step out.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "matrix.h"
#include "scale.h"

namespace attn {

/// Where the tokens are: `Rows` (Q = X W_Q, the paper and PyTorch) or
/// `Columns` (Q = Ω_Q X + β_Q, softmax down each column, the UDL book).
enum class Layout { Rows, Columns };

/// The arithmetic every step is computed in.
enum class Precision { Float64, Float32 };

// Scale, how QKᵀ is scaled before the softmax, is in scale.h with the rule that applies it.

/// How a custom mask combines with the scores.
enum class MaskKind {
  Keep,      ///< boolean: nonzero keeps the key, zero hides it (-inf)
  Additive,  ///< added to the scores: 0 keeps, -inf hides, other values bias
};

/// Rotary position embedding (RoPE): each head's queries and keys rotated at their positions
/// before the scores. Angles θ_i = base^(-2i/dims), or explicit cos/sin tables as ONNX Runtime
/// and Hugging Face precompute them (how the RoPE scaling schemes differ).
struct Rope {
  enum class Style {
    Half,         ///< feature i pairs with i + dims/2 (GPT-NeoX; Llama as Hugging Face writes it)
    Interleaved,  ///< feature 2i pairs with 2i + 1 (RoFormer, GPT-J)
  };
  bool on = false;
  Style style = Style::Half;
  double base = 10000;
  int dims = 0;                    ///< features rotated, from the first; 0 means d_k
  std::optional<Matrix> cos, sin;  ///< a row per position, dims/2 columns (replace base)
};

/// A position encoding added to X before the projections.
enum class Positional {
  None,
  Sinusoidal,  ///< the original Transformer's sin/cos encoding
  Learned,     ///< the problem's input P (same shape as X)
};

/// What a query whose keys are all hidden gets.
enum class FullyMasked {
  Zero,  ///< weights and output 0 (PyTorch >= 2.5, ONNX 1.23)
  NaN,   ///< NaN, as a plain softmax of -inf everywhere gives
};

/// Which attention a problem computes.
enum class AttentionKind {
  Softmax,  ///< softmax(QKᵀ·scale)·V, with every option of the core
  Linear,   ///< linear attention (Katharopoulos et al., 2020): φ(Q)φ(K)ᵀV, row by row over φ(q)ᵀΣφ(k)
};

/// Linear attention's feature map φ, applied to every feature of Q and K.
enum class FeatureMap {
  EluPlusOne,  ///< elu(x) + 1: x + 1 for x > 0, e^x otherwise (the paper's; always positive)
  Relu,        ///< max(0, x)
  Identity,    ///< x
};

/// QK-norm (Qwen3, Gemma 3): each head's d_k features of Q and of K normalised separately, after
/// projection and bias, before RoPE; new keys only (a cache holds keys already normalised).
struct QkNorm {
  enum class Type {
    None,   ///< not given (refused when qk_norm is on: the type is required)
    Rms,    ///< x / √(mean(x²) + eps) · g
    Layer,  ///< (x − mean) / √(var + eps) · g, population variance, no bias
  };
  bool on = false;
  Type type = Type::None;
  double eps = 1e-6;
  std::vector<double> g_q, g_k;  ///< d_k gains shared by every head; empty: ones
};

/// What turns a row of logits into weights.
enum class ScoreFn {
  Softmax,  ///< e^x / Σ e^x (the default)
  Sigmoid,  ///< σ(x + b) entry by entry (Ramapuram et al., 2024): rows need not sum to 1
};

/// Differential attention (Ye et al., 2024): each head's d_k splits in halves, two softmaxes,
/// A = A₁ − λA₂, and the head's output optionally normalised.
struct Differential {
  bool on = false;
  std::vector<double> lambda;  ///< one number, or one per head (required)
  double lambda_init = 0.8;
  bool norm = true;  ///< x / √(mean(x²) + 1e-5) · (1 − lambda_init) per head output row
};

/// Options of a problem; defaults as in the README.
struct Options {
  Layout layout = Layout::Rows;
  Scale scale;
  bool causal = false;  ///< query i sees keys j <= i (top-left aligned when L != S)
  /// L×S in the rows layout, S×L in the columns layout (the shape of the scores step).
  std::optional<Matrix> mask;
  MaskKind mask_kind = MaskKind::Additive;
  double softcap = 0.0;  ///< > 0: scores become softcap·tanh(scores/softcap)
  int heads = 1;
  int kv_heads = 0;  ///< 0 means "same as heads"
  Precision precision = Precision::Float64;

  // ---- positions and what depends on them (a query's position and a key's position) ----
  /// Explicit integer positions (options.positions): one per query, one per key over cache +
  /// new keys. Empty: queries sit at P ... P+L-1 and keys at 0 ... P+S-1 (P = cached rows).
  std::vector<double> query_positions, key_positions;
  Rope rope;
  Positional positional = Positional::None;
  /// ALiBi: adds -slope·|query position - key position| to the scaled scores.
  bool alibi = false;
  std::vector<double> alibi_slopes;  ///< one per head; empty: the ALiBi paper's slopes
  /// A window: the query at p sees the key at q iff p - left <= q <= p + right; infinity on a
  /// side means unbounded. Off when both are infinite.
  double window_left = std::numeric_limits<double>::infinity();
  double window_right = std::numeric_limits<double>::infinity();
  int sink_tokens = 0;  ///< keys at positions < n stay visible whatever the window (StreamingLLM)
  /// A learned sink (gpt-oss): an extra logit in each softmax's denominator, one for all heads or
  /// one per head; empty: none.
  std::vector<double> sink_logit;
  /// What a hidden score becomes: -inf (the default) or a finite number such as -1e9.
  double mask_fill = -std::numeric_limits<double>::infinity();
  FullyMasked fully_masked = FullyMasked::Zero;

  // ---- linear attention (options.attention = "linear"); empty: not given (the defaults apply) ----
  AttentionKind attention = AttentionKind::Softmax;
  std::optional<FeatureMap> feature_map;  ///< default elu+1
  std::optional<bool> normalize;          ///< divide by φ(q)ᵀΣφ(k) (default true)
  /// γ in (0, 1]: key j weighs γ^(pos(i) − pos(j)) in query i's sum (causal only; default 1).
  std::optional<double> decay;

  // ---- attention variants of 2024-2026 (issue 31); the rows layout only ----
  QkNorm qk_norm;
  ScoreFn score_fn = ScoreFn::Softmax;
  /// The sigmoid's bias b (score_fn sigmoid); NaN: −ln S, S the number of keys (cache included).
  double sigmoid_bias = std::numeric_limits<double>::quiet_NaN();
  Differential differential;
};

/// A problem: either Q, K, V directly, or X with W_Q, W_K, W_V (and X_kv for
/// cross-attention). In the columns layout, X holds tokens as columns and the W's are the
/// Ω matrices of the UDL book (d×D), biases are the β's.
struct Problem {
  std::optional<Matrix> Q, K, V;
  std::optional<Matrix> X, X_kv, W_Q, W_K, W_V, W_O;
  std::optional<Vector> b_Q, b_K, b_V, b_O;
  /// A KV cache: keys and values of earlier tokens as a cache stores them (projected, keys
  /// already rotated when RoPE is on), kv_heads·d_k and kv_heads·d_v wide; before the new rows.
  std::optional<Matrix> past_K, past_V;
  std::optional<Matrix> P;  ///< learned positions added to X (Positional::Learned)
  /// Multi-head latent attention (DeepSeek-V2, equations 9-19 without the latent RMSNorms), on
  /// when W_DKV is given, from X in the rows layout: c_KV = X·W_DKV (d_model×d_c), K_C = c_KV·W_UK
  /// (d_c×heads·d_h), V = c_KV·W_UV (d_c×heads·d_v), k_R = RoPE(X·W_KR) (d_model×d_r, one for all
  /// heads); queries Q_C = X·W_Q, or c_Q = X·W_DQ (d_model×d_cq) and Q_C = c_Q·W_UQ (d_cq×heads·d_h);
  /// q_R = RoPE(c_Q·W_QR) when W_QR has d_cq rows, RoPE(X·W_QR) when it has d_model rows
  /// (heads·d_r columns). W_QR and W_KR go together (without them: no rotary part).
  std::optional<Matrix> W_DKV, W_UK, W_UV, W_KR, W_QR, W_DQ, W_UQ;
  /// Latent attention's cache: the latents c_KV and the rotated k_R of earlier tokens (positions
  /// 0 ... P-1), d_c and d_r wide: all a latent cache stores.
  std::optional<Matrix> past_c_KV, past_k_R;
  /// The output gate (Qwen3-Next): G = σ(X·W_G + b_G), d_model×(heads·d_v) (elementwise) or
  /// d_model×heads (headwise); each head's output is multiplied by its gate.
  std::optional<Matrix> W_G;
  std::optional<Vector> b_G;
  /// The gradient of a loss with respect to the output, shaped like it: what gradients()
  /// propagates back (all ones when absent: the loss Σ O). run() does not read it.
  std::optional<Matrix> dO;
  Options options;
};

/// What the numbers of a step are, so every view picks the right colour scale.
enum class ValueKind {
  Signed,        ///< any real number (projections, scores, outputs): a scale symmetric about 0
  Probability,   ///< 0 to 1, rows summing to 1 (attention weights): a fixed 0-1 scale
  KeepMask,      ///< 1 keeps a key, 0 hides it
  AdditiveBias,  ///< added to the scores: 0 keeps, -inf hides, other values bias
};

/// What a step's rows or columns stand for.
enum class Axis {
  Queries,    ///< one per query token (L)
  Keys,       ///< one per key/value token (S)
  Features,   ///< one per feature (d_k, d_v, heads·d_v or d_model)
  Positions,  ///< one per position a query or key sits at (rope_angles), in increasing order
};

/// The step's side of a Tie: one of its axes by name, or, for a step whose two axes are both
/// features (a weight's gradient dW_*, a bias's db_*), its row or its column in the rows layout.
enum class TieAxis { Queries, Keys, Features, Positions, Row, Column };

/// How a cell of a step fixes a cell of one of its input steps: the input's index along `input`
/// is the step's index along `step` plus `shift` (a cache's new keys sit after the cached ones, a
/// head's features are a slice of the whole). Said in the rows layout; an axis names the same
/// thing in the columns layout, a Row/Column side swaps there.
struct Tie {
  TieAxis step = TieAxis::Queries;
  Axis input = Axis::Queries;
  double shift = 0;
};

/// How a step reads one input step: the ties of its axes to the input's. Every axis of the input
/// no tie names is read whole (a sum or a softmax runs along it).
struct Read {
  std::vector<Tie> ties;
};

/// One intermediate result, reported in the layout the problem chose, with everything a view
/// needs to draw and explain it (so no view re-derives head groups, sources or formulas).
struct Step {
  /// positional, X_pos, rope_angles, Q, K, V, Q_normed, K_normed, Q_rot, K_rot, K_cache, V_cache,
  /// scores, scaled, softcapped, alibi, biased, mask, masked, weights_1, weights_2, weights,
  /// head_output, head_normed, gate, gated_output, concat, output; linear attention's
  /// phi_Q, phi_K, linear_scores, normalizer; latent attention's c_KV, k_R, c_Q (shared), K_C, V,
  /// Q_C, q_R, scores_C, scores_R (per head), its absorbed form Q_absorbed, scores_C_absorbed,
  /// O_latent (per head), output_absorbed, and cache_sizes (numbers a cache stores per token)
  std::string id;
  int head = -1;  ///< head index for per-head steps, -1 for concat and output
  Matrix values;

  std::string title_id;  ///< the caption's message id in web/lib/locales: "step.scaled" (no head number)
  std::string symbol;    ///< its name in TeX, e.g. "\\tilde S^{(2)}" (head 2 of several)
  std::string tex;       ///< its formula for this problem's options, in TeX (KaTeX subset)
  std::string text;      ///< the same formula in plain Unicode text (terminal, CSV comments)
  ValueKind kind = ValueKind::Signed;
  Axis row_axis = Axis::Queries, col_axis = Axis::Features;  ///< in the step's own layout
  std::vector<int> inputs;         ///< indices (into Trace::steps) of the steps it is computed from
  std::vector<Read> reads;         ///< how it reads each of `inputs`, in the same order
  std::vector<std::string> given;  ///< problem inputs it reads directly: X, W_Q, b_Q, mask, W_O, ...
  int kv_group = -1;               ///< per-head steps: the key/value head the head reads (GQA); -1 otherwise
  /// Per-head slices (Q, K, V, head_output): the columns [first, first + count) of the full
  /// projection (or of the concatenation) this step is; count 0 when the step is not a slice.
  Eigen::Index feature_first = 0, feature_count = 0;
};

/// Why an entry of the mask step is hidden (or kept): the bits of HeadFacts::hidden_by.
enum MaskComponent : int {
  kHiddenByCausal = 1,  ///< the key comes after the query
  kHiddenByWindow = 2,  ///< the key is outside the query's window (and is no sink)
  kHiddenByMask = 4,    ///< the user's mask hides it (a boolean 0, or -inf in an additive mask)
  kKeptBySink = 8,      ///< the window would hide it, but the key is a sink token
};

/// Facts a teacher shows next to one head's steps. Rows are query rows (query columns in
/// the columns layout).
struct HeadFacts {
  int head = 0;
  double scores_variance = 0;     ///< population variance of QKᵀ (numpy's .var())
  double scaled_variance = 0;     ///< the same after scaling
  Vector weight_sums;             ///< sum of each query's weights: 1, or 0 for a fully masked query
  Vector max_weight;              ///< the largest weight of each query
  Vector entropy;                 ///< -Σ w log w of each query's weights (nats)
  std::vector<int> fully_masked;  ///< queries (from 0) whose keys are all masked
  /// With a mask step: per entry (in the mask step's layout) the MaskComponent bits that hid it
  /// or kept it as a sink; 0 where every component keeps the key. Empty without a mask step.
  Matrix hidden_by;
  /// With a mask step: the weight each query still gives its hidden keys (0 with mask_fill -inf;
  /// a finite fill leaves them a little, or everything when a row is fully masked).
  Vector hidden_weight;
  double alibi_slope = 0;  ///< ALiBi: this head's slope m (the bias is -m·|query pos - key pos|)
  /// The head's sink logit (-inf: none) and the share of each query's softmax the sink takes,
  /// 1 - Σ weights (empty without a sink).
  double sink_logit = -std::numeric_limits<double>::infinity();
  Vector sink_share;
  /// RoPE's relative-position property, as numbers: every query and key (cached ones too) turned
  /// further by `rope_shift` positions, and the largest change that makes to any score (0 up to
  /// rounding: rotated scores depend only on how far apart the tokens are). rope_shift is 0 when
  /// not checked: RoPE off, or cos/sin given as tables (whose rows stop at their last position).
  double rope_shift = 0;
  double rope_shift_change = 0;
  /// QK-norm: the largest score with the norm, and the largest the same queries and keys give
  /// without it (NaN without QK-norm).
  double max_score = std::numeric_limits<double>::quiet_NaN();
  double max_score_without_norm = std::numeric_limits<double>::quiet_NaN();
  /// Differential attention: the head's λ (NaN otherwise).
  double lambda = std::numeric_limits<double>::quiet_NaN();
};

/// Everything computed for one problem.
struct Trace {
  std::vector<Step> steps;
  Matrix output;
  std::vector<Message> warnings;  ///< ids "warning.*"
  std::vector<HeadFacts> facts;   ///< one per query head
  double scale = 1.0;             ///< the factor QKᵀ was multiplied by
  int d_k = 0, d_v = 0, heads = 1, kv_heads = 1;
  Eigen::Index queries = 0, keys = 0;  ///< L and S
  Vector rope_positions;  ///< the rows of rope_angles: the positions it turns, increasing (empty without RoPE)
};

/// Validate `problem` and compute attention with every intermediate step.
/// Throws InputError naming the inputs that disagree and their shapes.
Trace run(const Problem& problem);

/// The worked calculation of one cell of one step, with the numbers filled in, so a page can
/// show how the value came about without doing any maths itself.
struct Explanation {
  /// What kind of calculation produced the cell:
  ///  "projection"  value = Σ_k left[k]·right[k] + bias   (a row of X times a column of W)
  ///  "input"       value was given (Q, K, V in direct mode)
  ///  "dot"         value = Σ_k left[k]·right[k]          (a query row · a key row)
  ///  "scale"       value = input · factor  (or input / divisor when the scale divides)
  ///  "softcap"     value = cap · tanh(input / cap)
  ///  "alibi"       value = -slope · |query_pos - key_pos|
  ///  "bias"        value = input + additive                (the ALiBi bias added)
  ///  "mask_entry"  value = 1 (kept) or 0 (hidden) for a boolean mask step, or the additive
  ///                mask's number (-inf hides); `components` say what hid it
  ///  "mask"        value = input + additive (additive = -inf hides the key), or `fill` where a
  ///                hidden score becomes mask_fill; `components` say what hid it
  ///  "softmax"     value = exp(logits[col] - max) / (Σ_j exp(logits[j] - max) + sink_exp),
  ///                sink_exp = exp(sink_logit - max) with a sink (max counts the sink too)
  ///  "weighted_sum" value = Σ_j left[j]·right[j]         (weights of the query · one column of V)
  ///  "concat"      value copied from head `source_head`, column `source_col`
  ///  "sinusoid"    value = sin(angle) for an even feature (from 0), cos(angle) for an odd one;
  ///                angle = position / 10000^(2i/d_model), i = feature / 2 (cos, sin: both)
  ///  "add"         value = input + additive                (X plus its position encoding)
  ///  "rotation"    value = left[0]·right[0] + left[1]·right[1]: RoPE turns the pair of features
  ///                (pair_first, pair_second), left = their values, by angle = position·θ_i;
  ///                right = (cos, -sin) for the pair's first feature, (sin, cos) for its second
  ///                (angle NaN when cos and sin come from the tables)
  ///  "unrotated"   value = input                           (a feature beyond RoPE's dims)
  ///  "cache"       value copied from token `source_row`, feature `source_col` of `source`:
  ///                "past_K"/"past_V" (a cached row) or the step of the new rows
  ///  "qk_norm"     value = (x − mean) / divisor · factor (layer) or x / divisor · factor (rms):
  ///                divisor = √(spread + eps), spread the row's variance or mean(x²); left = the
  ///                head's row of features (Q_normed, K_normed, head_normed)
  ///  "sigmoid"     value = 1 / (1 + e^-(input + bias)), 0 where the key is hidden
  ///  "difference"  value = part_1 − lambda·part_2 (differential attention's weights)
  ///  "gate"        value = σ(Σ_k left[k]·right[k] + bias): X's row times a column of W_G
  ///  "gated"       value = input · factor (the head's output times its gate)
  ///  "angle"       value = position·θ_i with θ_i = base^(-2i/dims) for the pair i (turning
  ///                features pair_first and pair_second); with cos/sin tables, atan2(sin, cos)
  ///                of the pair's entries at that position
  ///  "feature_map" value = φ(input): elu(x) + 1, max(0, x) or x (linear attention's phi_Q, phi_K)
  ///  "linear_score" value = factor·Σ_k left[k]·right[k] (φ(q_i)·φ(k_j) times γ^(pos(i) − pos(j)));
  ///                0 where causal attention hides the key (`hidden`)
  ///  "row_sum"     value = Σ_j left[j]                   (the normalizer: a row of the linear scores)
  ///  "linear_output" value = Σ_j left[j]·right[j] / divisor (the linear scores of the query times a
  ///                column of V, over the normalizer; divisor 0: not normalized)
  ///  "sum"         value = left[0] + left[1]                (latent attention's scores: the two parts)
  ///  "head_sum"    output_absorbed: value = Σ left (one term per head: its latent output times
  ///                W_UV·W_O's column, `products` the heads' terms; `right` the naive output's cell)
  ///  "cache_size"  value = the numbers a cache stores per token for one form (`source`: MHA, GQA
  ///                g = ..., MQA, MLA), `left` its factors
  /// Gradient steps (gradients.h), by the chain rule from the steps each reads:
  ///  "input"       dO: given, or 1 (no dO given: the loss is Σ O)
  ///  "gradient_dot" value = Σ_k left[k]·right[k]     (a gradient times what it reached the cell
  ///                through: dA, dV, dQ, dK, dW_*, dhead_output with W_O, dX over its paths)
  ///  "softmax_grad" value = factor·(input - Σ_k products[k]): factor = A_ij, input = dA_ij,
  ///                products = A_ik·dA_ik along the row (left = A's row, right = dA's row)
  ///  "mask_grad"   value = input, or 0 where the mask hides the key (`hidden`, `components`)
  ///  "softcap_grad" value = input·factor, factor = 1 - tanh²(scaled / cap)
  ///  "linear_score_grad" value = Σ_k left[k]·right[k] / divisor: dΛ_ij of linear attention, left =
  ///                the head's output gradient of the query, right = V_j − O_i (V_j when not
  ///                normalized, divisor 0 then), divisor = D_i
  ///  "feature_map_grad" value = input·factor: dQ, dK from dφ(Q), dφ(K), factor = φ′(left[0])
  ///  "scale"       dscores: value = input · factor (the scale)
  ///  "rotation" / "unrotated"  dQ, dK from dQ_rot, dK_rot: RoPE turned back, right = (cos, sin)
  ///                for the pair's first feature, (-sin, cos) for its second
  ///  "copy"        value copied from row `source_row`, column `source_col` (rows layout) of step
  ///                `source`: dO's columns of a head, a new key's row of dK_cache, dP = dX
  ///  "head_sum"    value = Σ left: the heads' gradients (terms: head numbers, gradients), one
  ///                head's block of dQ or the sum over a key/value group's heads
  ///  "token_sum"   value = Σ left: a bias's gradient, a column summed over the tokens
  ///  "qk_norm_grad" value = (input·factor − mean − right[c]·Σ products / d) / divisor: dQ, dK through
  ///                QK-norm (and dhead_output through differential attention's norm), c the cell's
  ///                feature; left = u = dy ∘ g of the row, right = x̂, products = u ∘ x̂, input = dy_c,
  ///                factor = g_c, mean = mean(u) (layer; 0 for rms), divisor = σ
  ///  "sigmoid_grad" value = input·factor: dS of sigmoid attention, input = dA, factor = A(1 − A)
  ///  "gated"       dhead_output / dhead_normed through the gate: value = input·factor, factor = G
  ///  "scale"       also dweights_2 (factor −λ); "copy" also dweights_1 (= dA); "gradient_dot" also
  ///                dgate, dg_q / dg_k (over every head's rows), dW_G, differential attention's dQ / dK
  ///                (left: the half's dS_k = A_k ∘ (dA_k − rowsum(dA_k ∘ A_k)) [masked, softcap] · s)
  std::string kind;
  std::string step;
  int head = -1;
  Eigen::Index row = 0, col = 0;  ///< in the layout of the step, from 0
  double value = 0;
  std::vector<double> left, right, products;  ///< term-by-term factors and their products
  bool has_bias = false;
  double bias = 0;
  double input = 0, factor = 1, divisor = 0;  ///< scale / softcap / mask operands (divisor 0: multiply)
  double additive = 0;                        ///< mask: what the mask adds; add: the encoding
  std::vector<double> logits, shifted, exps;  ///< softmax: the row of logits, logits - max, exps
  double max = 0, exp_sum = 0;
  int source_head = -1;
  Eigen::Index source_col = 0;
  double position = 0;                             ///< sinusoid, rotation: the token's position
  double angle = 0, cos = 1, sin = 0;              ///< sinusoid, rotation
  Eigen::Index pair_first = -1, pair_second = -1;  ///< rotation: the features turned together
  std::string source;                              ///< cache: "past_K", "past_V" or a step id
  Eigen::Index source_row = 0;                     ///< cache
  /// alibi: the head's slope and the two positions compared.
  double slope = 0, query_pos = 0, key_pos = 0;
  /// mask_entry / mask: whether the entry is hidden, by which components ("causal", "window",
  /// "mask"), whether a sink token kept it from the window, and what a hidden score becomes.
  bool hidden = false, kept_by_sink = false;
  std::vector<std::string> components;
  double fill = -std::numeric_limits<double>::infinity();
  /// softmax with a sink logit (gpt-oss): its logit, its exp(logit - max), its share.
  bool has_sink = false;
  double sink_logit = 0, sink_exp = 0, sink_share = 0;
  /// qk_norm / head_norm: the row's mean (layer), and mean(x²) or its variance; `divisor` is
  /// √(that + eps), `factor` the gain. sigmoid: `bias` is b. difference: λ and the two weights.
  double mean = 0, spread = 0;
  double lambda = 0, part_1 = 0, part_2 = 0;

  // ---- the calculation described, so every view writes any kind the same way ----
  // Placeholders a view fills: `@N` is numbers[N] at the view's decimals (numbers[0] is the
  // value); `@terms(a,b)` is the sum (x_a)(x_b) + ... over the rows of the terms table's columns
  // a and b, and `@terms(a)` the sum of column a's entries (a view writes as many terms as it
  // shows and elides the rest with \cdots); in the text (from text_id) and the terms' caption, `@query`, `@key`
  // and `@token` name the cell's query, key or token (a token's name on the page, "query 2" in
  // a document).
  /// TeX of an aligned derivation: lines[0] is the cell, each further line a right-hand side
  /// ("= ..."), the last one the value.
  std::vector<std::string> lines;
  /// What happens, in words: a message id ("explain.scores.dot") of the catalogues
  /// (web/lib/locales/<lang>.json) and its named parameters (name, value as text). The words live
  /// only there: a view formats the message in the learner's language. A number that is a cell's
  /// operand is its placeholder `@N` (the view writes it at its decimals); other numbers (positions,
  /// sizes, indices) are written here, as they are shown. The parameter `hidden` names what hid a key
  /// ("causal_window", "none", ...) and is written by the message explain.hidden; a choice
  /// between wordings is a parameter the message selects on ("yes"/"no", "row"/"column", ...).
  std::string text_id;
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<double> numbers;
  /// The term table a view draws beside the derivation (no columns: none).
  struct Terms {
    /// The caption: a message id ("explain.terms.keys_of_query") and its parameters, as text_id.
    std::string caption_id;
    std::vector<std::pair<std::string, std::string>> caption_params;
    /// headers[0] heads the row labels. A header in words is its message id ("explain.term.weight");
    /// a symbol ("q", "x̂", "A₁ − λ·A₂") is written as it is.
    std::vector<std::string> headers;
    std::string index;  ///< what labels the rows: "feature" or "m" (1, 2, ...), "key" (the keys), "query" (the queries)
    std::vector<std::vector<double>> columns;
    int highlight = -1;  ///< the row of the cell's own term, -1: none
  } terms;
};

/// Explain cell (row, col) of step `step_id` of `head` (-1 for concat/output) of the trace of
/// `problem`, or of a gradient step (dA, dS, dQ, ...; gradients.h) of its backward pass, with the
/// problem's dO (all ones when absent). A per-head step asked for with head -1 answers for head 0.
/// Throws InputError if the step or cell does not exist.
Explanation explain(const Problem& problem, const std::string& step_id, int head, Eigen::Index row, Eigen::Index col);

/// explain() for the forward steps only (a gradient step is an InputError): what a module links
/// that leaves the backward pass out (the browser's core wasm; explain() is in
/// explain_gradients.cpp).
Explanation explain_forward(const Problem& problem, const std::string& step_id, int head, Eigen::Index row,
                            Eigen::Index col);

/// Largest number of tokens (L or S) and of any other dimension `run` accepts; over it,
/// `run` throws before allocating. Several L×S matrices are kept per head.
inline constexpr Eigen::Index kMaxTokens = 4096;
inline constexpr Eigen::Index kMaxDim = 4096;
/// Upper bound on the number of values a whole trace may hold (keeps a tab's heap safe).
inline constexpr double kMaxTraceValues = 64.0 * 1024 * 1024;

}  // namespace attn
