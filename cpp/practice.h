// Attention in practice, on a problem's own numbers: decoding token by token with a KV cache,
// FlashAttention's tiles (the online softmax), and the one-row online softmax on its own.
// Each reads the core's run() for its numbers; what is new here is the schedule.
#pragma once

#include <string>
#include <vector>

#include "attention.h"

namespace attn {

/// One step of decoding: token t's query attends to the keys and values of tokens 0..t.
struct DecodeStep {
  int t = 0;
  /// Keys and values the new query reads: the cache of tokens 0..t-1 plus the token's own (t + 1).
  Eigen::Index cache_rows = 0;
  Matrix scores;   ///< heads × cache_rows: the one new row of QKᵀ of each head (before scaling)
  Matrix weights;  ///< heads × cache_rows: the new row of attention weights of each head
  Vector output;   ///< the token's output (its row of the output; its column in the columns layout)
  /// Multiply-adds of the matrix products for this token (see decode()).
  double flops_cached = 0, flops_full = 0;
  /// max |this step − token t of run() with causal: true| over the weights and the output
  /// (NaN where both are NaN counts as equal).
  double difference = 0;
};

/// A problem decoded token by token.
struct Decoding {
  std::vector<DecodeStep> steps;
  Matrix output;                            ///< every token's output, in the problem's layout
  std::vector<Message> warnings;            ///< those of run() with causal: true
  double flops_cached = 0, flops_full = 0;  ///< summed over the steps
};

/// The most tokens decode() takes: it runs one trace per token (a 1024-token decode takes
/// seconds in a browser tab).
inline constexpr Eigen::Index kMaxDecodeTokens = 1024;

/// Runs a self-attention problem (Q, K, V with as many keys as queries, or X with its weights)
/// as a model generates it: at step t the query of token t attends to the cache of the keys and
/// values of tokens 0..t-1 (as run() computes them, rotated when RoPE is on) plus its own, each
/// step being run() of a problem with that cache (past_K, past_V). Decoding is causal whatever
/// options.causal says; every other option applies. Multiply-adds counted per step (matrix
/// products only; scaling, masks, rotations and the softmax's exponentials are not counted),
/// with H heads, G key/value heads, n = t + 1 tokens, D the features of X (0 when Q, K, V are
/// given) and D_O the output's width when W_O is given:
///   cached: D·(H·d_k + G·d_k + G·d_v)   the new token's projections
///         + H·n·d_k + H·n·d_v           its row of QKᵀ, its row of A·V
///         + H·d_v·D_O                    its row through W_O
///   full:   n·D·(H·d_k + G·d_k + G·d_v) + H·n²·d_k + H·n²·d_v + n·H·d_v·D_O
/// (full: recomputing causal attention of tokens 0..t from scratch, the whole QKᵀ and A·V).
/// Throws InputError for a problem with past_K/past_V, X_kv, or a different number of keys and
/// queries (decode makes its own cache of self-attention), more than kMaxDecodeTokens tokens,
/// and for positions under which a later token's key would be visible to an earlier query.
Decoding decode(const Problem& problem);

/// One tile FlashAttention-2 visits: query block × key block of one head. Rows are the block's
/// queries (in the columns layout `scores` and the partial outputs are transposed, as the
/// trace's steps are). A skipped tile (every score hidden: −∞) carries no numbers.
struct Tile {
  int head = 0, q_block = 0, k_block = 0;
  Eigen::Index q_first = 0, q_count = 0, k_first = 0, k_count = 0;
  bool skipped = false;
  Matrix scores;                         ///< the scores the softmax reads (scaled, capped, biased, masked)
  Vector m_before, m_after;              ///< running max per query row
  Vector rescale;                        ///< e^(m_before − m_after), 1 while m is still −∞
  Vector l_before, l_after;              ///< running sum ℓ per query row
  Matrix partial_before, partial_after;  ///< unnormalised output Õ (q_count × d_v)
};

/// A query block of one head after its last key block: O = Õ / ℓ.
struct TileBlock {
  int head = 0, q_block = 0;
  Eigen::Index q_first = 0, q_count = 0;
  Vector m, l;
  Matrix output;  ///< q_count × d_v (transposed in the columns layout)
};

/// Attention computed tile by tile with the online softmax (FlashAttention-2's forward pass).
struct Tiles {
  Eigen::Index block_q = 0, block_k = 0;
  std::vector<Tile> tiles;        ///< per head, per query block, per key block, in that order
  std::vector<TileBlock> blocks;  ///< per head, per query block
  int visited = 0, skipped = 0;   ///< tiles computed and tiles skipped
  Matrix output;                  ///< the problem's output (through W_O when given)
  double max_difference = 0;      ///< max |output − run()'s output|
  /// Bytes moved between HBM and on-chip SRAM (elements × element_bytes), see tiles().
  double bytes_standard = 0, bytes_flash = 0;
  int element_bytes = 8;
  std::vector<Message> warnings;  ///< those of run()
};

/// FlashAttention-2's forward pass on the problem's own numbers, in its precision: per head, an
/// outer loop over query blocks of block_q rows and an inner loop over key blocks of block_k
/// keys (a block larger than the sequence is the whole sequence). Each visited tile updates
/// the running max m, the running sum ℓ and the partial output Õ of its query rows:
///   m' = max(m, rowmax(T)),  ℓ' = e^(m − m')·ℓ + rowsum(e^(T − m')),
///   Õ' = e^(m − m')·Õ + e^(T − m')·V_j,
/// starting from m = −∞, ℓ = 0, Õ = 0 (with a sink logit s: m = s, ℓ = 1, a key whose value is
/// 0); after the last key block O = Õ / ℓ (0 for a fully masked row, NaN with fully_masked
/// "nan"). The tile of scores T is read from run() (every score the softmax reads); a tile
/// whose scores are all −∞ (causal, the window, the mask) is skipped, as FlashAttention-2
/// skips the blocks above the diagonal. Bytes moved, per head (the sum over heads; d_k, d_v
/// per head; M = L·S when the problem has a mask matrix, which each algorithm reads once per
/// score it uses, else 0):
///   standard (S = QKᵀ written, read by the softmax, P written, read by P·V):
///     L·d_k + S·d_k + 4·L·S + S·d_v + L·d_v + M
///   flash: Σ over query blocks (B_r·d_k + B_r·d_v + Σ over visited key blocks B_c·(d_k + d_v)
///     + the mask's B_r·B_c entries) — Q_i read once, O_i written once, K_j and V_j read per
///     visited tile (the log-sum-exp FlashAttention-2 also writes, for the backward pass, is
///     not counted).
/// Throws InputError for block sizes below 1 and for scores of +inf (overflowed).
Tiles tiles(const Problem& problem, Eigen::Index block_q, Eigen::Index block_k);

/// Checks a block size of tiles() (`name`: block_q or block_k) as given, before it becomes an
/// integer: "block_q must be a positive integer, got number 0".
void check_block_size(const char* name, double value);

/// One step of linear attention's recurrent form (a token) or chunked form (a chunk of tokens),
/// for one head. Rows in the rows layout (linear attention refuses the columns layout).
struct RecurrentStep {
  int head = 0;
  Eigen::Index first = 0, count = 0;  ///< the tokens of this step: first .. first + count − 1
  Matrix state;  ///< S after the step: d_k × d_v, Σ γ^(p − pos(j))·φ(k_j)v_jᵀ over the keys so far
  Vector z;      ///< z after the step: d_k, Σ γ^(p − pos(j))·φ(k_j)
  /// Chunked form: the numerators of the chunk's rows from inside the chunk (a small causal
  /// linear attention) and from the state carried in (φ(q)ᵀ·S_before·γ^(p − p_before)); their
  /// denominators likewise. Empty in the recurrent form.
  Matrix intra, inter;
  Vector intra_normalizer, inter_normalizer;
  Matrix output;          ///< count × d_v: the head's output rows (φ(q)ᵀS / φ(q)ᵀz, or φ(q)ᵀS)
  double difference = 0;  ///< max |these rows − the parallel form's (run()'s) head output rows|
};

/// What a form of attention costs, per head summed over the heads: multiply-adds of its
/// products and the numbers it keeps while it runs (see recurrent()).
struct FormCost {
  std::string form;  ///< "softmax", "parallel", "recurrent" or "chunked"
  double multiply_adds = 0;
  double state = 0;
};

/// Linear attention computed token by token (recurrent) or chunk by chunk (chunked).
struct Recurrent {
  Eigen::Index chunk = 0;            ///< 0: the recurrent form, token by token; else the chunk size
  std::vector<RecurrentStep> steps;  ///< per head, per token or chunk, in that order
  Matrix output;                     ///< the problem's output (through W_O when given)
  double max_difference = 0;         ///< max |output − run()'s output|
  std::vector<FormCost> costs;       ///< softmax, parallel, recurrent (and chunked with a chunk)
  std::vector<Message> warnings;     ///< those of run()
};

/// Causal linear attention (options.attention "linear", options.causal true) in its recurrent
/// form (chunk 0): for each token t in order, S_t = γ^(p_t − p_{t−1})·S_{t−1} + φ(k_t)v_tᵀ,
/// z_t = γ^(p_t − p_{t−1})·z_{t−1} + φ(k_t), o_t = φ(q_t)ᵀS_t / φ(q_t)ᵀz_t (no division when
/// not normalized); or chunked (chunk ≥ 1): each chunk's rows are the causal linear attention
/// inside the chunk plus φ(q)ᵀ times the state carried in (decayed to the query's position),
/// and the state is carried on. φ(Q), φ(K) and V are read from run(). Costs summed over the
/// heads (H query heads, G key/value heads: a state belongs to a key/value head and is read by
/// its query heads; L tokens, d_k, d_v per head, P = L(L+1)/2 visible pairs, P_c the pairs
/// inside chunks of C tokens, z = d_k when normalized, else 0; decay factors not counted):
///   softmax   (causal QKᵀ and A·V): H·P·(d_k + d_v); state: the KV cache G·L·(d_k + d_v)
///   parallel  (Λ = φ(Q)φ(K)ᵀ, Λ·V, D): H·P·(d_k + d_v + 1) (no + 1 when not normalized);
///             state: Λ, H·L·L
///   recurrent: G·L·(d_k·d_v + z) (updating S and z) + H·L·(d_k·d_v + z) (reading them);
///             state: S and z, G·(d_k·d_v + z)
///   chunked:   H·P_c·(d_k + d_v + 1) (inside the chunks) + H·L·(d_k·d_v + z) (reading the
///             carried state) + G·L·(d_k·d_v + z) (carrying it on); state: G·(d_k·d_v + z) + H·C·C
/// Throws InputError unless the problem is causal linear self-attention whose queries and keys
/// sit at the same, increasing positions, or for a chunk below 0.
Recurrent recurrent(const Problem& problem, Eigen::Index chunk);

/// Checks a chunk size of recurrent() as given: "chunk must be a positive integer, got number 0".
void check_chunk_size(double value);

/// One entry of the online softmax of a row.
struct OnlineSoftmaxStep {
  Eigen::Index j = 0;
  double x = 0;
  double m_before = 0, m_after = 0, rescale = 1, l_before = 0, l_after = 0;
};

/// The softmax of one row, entry by entry, in `precision`.
struct OnlineSoftmax {
  std::vector<OnlineSoftmaxStep> steps;
  double max = 0, sum = 0;  ///< m and ℓ after the last entry
  Vector weights;           ///< e^(x − m) / ℓ
  std::vector<Message> warnings;
};

/// The online softmax of `row` (numbers, −inf allowed): m' = max(m, x), ℓ' = e^(m − m')·ℓ +
/// e^(x − m'). With subtract_max false m stays 0, so ℓ = Σ e^x: in float32 e^x overflows to
/// inf for x > 88.7 and the weights become NaN (a warning says where).
OnlineSoftmax online_softmax(const std::vector<double>& row, bool subtract_max, Precision precision);

}  // namespace attn
