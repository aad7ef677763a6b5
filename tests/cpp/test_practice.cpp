// Attention in practice: decoding with a KV cache, FlashAttention's tiles and the online
// softmax, each checked against run()'s numbers and against hand counts.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attention.h"
#include "said.h"
#include "numpy_random.h"
#include "practice.h"
#include "trace_lookup.h"
#include "english.h"

using attn::Matrix;
using attn::Problem;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Self-attention from X (N tokens, d_model 8): 4 query heads sharing 2 key/value heads
/// (d_k = 2, d_v = 3), W_O back to 8 features, with biases.
Problem gqa_projection(unsigned seed, int N) {
  attn::RandomState rng(seed);
  Problem p;
  p.X = rng.randn(N, 8);
  p.W_Q = rng.randn(8, 8);
  p.W_K = rng.randn(8, 4);
  p.W_V = rng.randn(8, 6);
  p.W_O = rng.randn(12, 8);
  const Matrix b = rng.randn(1, 8);
  p.b_Q = attn::Vector(b.transpose());
  p.b_O = attn::Vector(b.transpose());
  p.options.heads = 4;
  p.options.kv_heads = 2;
  return p;
}

/// The problem in the columns layout: every token matrix transposed.
Problem in_columns(Problem p) {
  for (auto* m : {&p.Q, &p.K, &p.V, &p.X, &p.W_Q, &p.W_K, &p.W_V, &p.W_O, &p.options.mask, &p.P}) {
    if (*m) *m = Matrix((*m)->transpose());
  }
  p.options.layout = attn::Layout::Columns;
  return p;
}

Matrix rows_of(const Matrix& m, const Problem& p) {
  return p.options.layout == attn::Layout::Columns ? Matrix(m.transpose()) : m;
}

/// Every step of decode(p) against run() of p with causal: true: each head's new row of
/// weights is row t of the causal weights (whose later keys are hidden: 0), the output row is
/// row t of the output, the scores row is row t of the causal scores.
void check_decode_equals_causal(const Problem& p, double tolerance = 1e-12) {
  Problem causal = p;
  causal.options.causal = true;
  const attn::Trace full = attn::run(causal);
  const attn::Decoding d = attn::decode(p);
  const Matrix output = rows_of(full.output, p);
  REQUIRE(static_cast<Eigen::Index>(d.steps.size()) == output.rows());
  CHECK((rows_of(d.output, p) - output).cwiseAbs().maxCoeff() <= tolerance);
  for (const attn::DecodeStep& s : d.steps) {
    INFO("t = " << s.t);
    REQUIRE(s.cache_rows == s.t + 1);
    REQUIRE(s.weights.rows() == full.heads);
    REQUIRE(s.weights.cols() == s.t + 1);
    for (int h = 0; h < full.heads; ++h) {
      INFO("head " << h);
      const Matrix weights = rows_of(values(full, "weights", h), p);
      const Matrix scores = rows_of(values(full, "scores", h), p);
      for (Eigen::Index j = 0; j < weights.cols(); ++j) {
        const double expected = weights(s.t, j);
        if (j > s.t) {
          CHECK(expected == 0);  // a key not generated yet is hidden by causal attention
          continue;
        }
        CHECK(std::abs(s.weights(h, j) - expected) <= tolerance);
        CHECK(std::abs(s.scores(h, j) - scores(s.t, j)) <= tolerance * (1 + std::abs(scores(s.t, j))));
      }
    }
    CHECK((s.output.transpose() - output.row(s.t)).cwiseAbs().maxCoeff() <= tolerance);
    CHECK(s.difference <= tolerance);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// decode

TEST_CASE("decode: every step's row is row t of causal attention", "[practice][decode]") {
  SECTION("Q, K, V given") { check_decode_equals_causal(direct(3, 5, 5, 4)); }
  SECTION("RoPE: the cache holds rotated keys") {
    Problem p = direct(4, 6, 6, 4);
    p.options.rope.on = true;
    check_decode_equals_causal(p);
    p.options.rope.style = attn::Rope::Style::Interleaved;
    p.options.rope.dims = 2;
    check_decode_equals_causal(p);
  }
  SECTION("a window [2, 0]") {
    Problem p = direct(5, 7, 7, 4);
    p.options.window_left = 2;
    p.options.window_right = 0;
    check_decode_equals_causal(p);
  }
  SECTION("sink tokens outside the window, a sink logit") {
    Problem p = direct(6, 7, 7, 4);
    p.options.window_left = 1;
    p.options.sink_tokens = 2;
    p.options.sink_logit = {0.5};
    check_decode_equals_causal(p);
  }
  SECTION("GQA from X with biases, W_O, RoPE, ALiBi and a softcap") {
    Problem p = gqa_projection(7, 6);
    p.options.rope.on = true;
    p.options.alibi = true;
    p.options.softcap = 2;
    check_decode_equals_causal(p);
  }
  SECTION("sinusoidal and learned positions, explicit positions") {
    Problem p = gqa_projection(8, 5);
    p.options.positional = attn::Positional::Sinusoidal;
    p.options.query_positions = {3, 4, 7, 8, 12};
    p.options.key_positions = {3, 4, 7, 8, 12};
    p.options.rope.on = true;
    check_decode_equals_causal(p);
    Problem learned = gqa_projection(9, 4);
    learned.P = attn::RandomState(10).randn(4, 8);
    check_decode_equals_causal(learned);
  }
  SECTION("a mask, a finite mask_fill, a fully masked token") {
    Problem p = direct(11, 4, 4, 2);
    p.options.mask = Matrix::Ones(4, 4);
    (*p.options.mask)(1, 0) = 0;
    (*p.options.mask)(1, 1) = 0;  // token 2 sees nothing
    (*p.options.mask)(3, 2) = 0;
    p.options.mask_kind = attn::MaskKind::Keep;
    check_decode_equals_causal(p);
    // A finite fill with no fully masked token: the hidden keys keep e^(-1e9 - max) = 0.
    p.options.mask_fill = -1e9;
    (*p.options.mask)(1, 1) = 1;
    check_decode_equals_causal(p);
  }
  SECTION("a finite mask_fill and a fully masked token: the keys that exist share its weight") {
    // Generated, token 2 spreads its weight over keys 1 and 2; causal attention with a finite
    // fill spreads it over all 4 (the keys of later tokens are filled with -1e9 too).
    Problem p = direct(11, 4, 4, 2);
    p.options.mask = Matrix::Ones(4, 4);
    (*p.options.mask)(1, 0) = 0;
    (*p.options.mask)(1, 1) = 0;
    p.options.mask_kind = attn::MaskKind::Keep;
    p.options.mask_fill = -1e9;
    const attn::Decoding d = attn::decode(p);
    CHECK(d.steps[1].weights(0, 0) == 0.5);
    CHECK(d.steps[1].weights(0, 1) == 0.5);
    CHECK(d.steps[1].difference >= 0.25);
  }
  SECTION("the columns layout") {
    Problem p = gqa_projection(12, 5);
    p.options.rope.on = true;
    p.options.window_left = 2;
    check_decode_equals_causal(in_columns(p));
  }
  SECTION("float32") {
    Problem p = gqa_projection(13, 5);
    p.options.precision = attn::Precision::Float32;
    check_decode_equals_causal(p, 1e-5);
  }
}

TEST_CASE("decode: the cache grows by one row a step; the new row of scores is q_t·K", "[practice][decode]") {
  const Problem p = direct(14, 4, 4, 2);
  const attn::Decoding d = attn::decode(p);
  REQUIRE(d.steps.size() == 4);
  const attn::DecodeStep& last = d.steps[3];
  CHECK(last.cache_rows == 4);
  for (Eigen::Index j = 0; j < 4; ++j) {
    CHECK(last.scores(0, j) == Approx(p.Q->row(3).dot(p.K->row(j))).epsilon(1e-14));
  }
  CHECK(d.steps[0].weights(0, 0) == 1);  // the first token sees only itself
}

TEST_CASE("decode: multiply-adds with the cache and without, counted by hand", "[practice][decode]") {
  // X 3x4 (D = 4), W_Q and W_K 4x2 (d_k = 2), W_V 4x3 (d_v = 3), W_O 3x4 (D_O = 4), one head.
  // Projections of one token: 4·(2 + 2 + 3) = 28; W_O of one token: 3·4 = 12.
  attn::RandomState rng(15);
  Problem p;
  p.X = rng.randn(3, 4);
  p.W_Q = rng.randn(4, 2);
  p.W_K = rng.randn(4, 2);
  p.W_V = rng.randn(4, 3);
  p.W_O = rng.randn(3, 4);
  const attn::Decoding d = attn::decode(p);
  // t = 0: 28 + 1·2 + 1·3 + 12 both ways.
  CHECK(d.steps[0].flops_cached == 45);
  CHECK(d.steps[0].flops_full == 45);
  // t = 1: cached 28 + 2·2 + 2·3 + 12; full 2·28 + 4·2 + 4·3 + 2·12.
  CHECK(d.steps[1].flops_cached == 50);
  CHECK(d.steps[1].flops_full == 100);
  // t = 2: cached 28 + 3·2 + 3·3 + 12; full 3·28 + 9·2 + 9·3 + 3·12.
  CHECK(d.steps[2].flops_cached == 55);
  CHECK(d.steps[2].flops_full == 165);
  CHECK(d.flops_cached == 150);
  CHECK(d.flops_full == 310);

  // Q, K, V given: no projections; two heads of d_k 1, d_v 3 (V 3x6), t = 2: 2·3·(1 + 3).
  Problem q = direct(16, 3, 3, 2);
  q.V = attn::RandomState(17).randn(3, 6);
  q.options.heads = 2;
  const attn::Decoding e = attn::decode(q);
  CHECK(e.steps[2].flops_cached == 24);
  CHECK(e.steps[2].flops_full == 72);
}

TEST_CASE("decode: problems it does not decode get a clear error", "[practice][decode]") {
  Problem cached = direct(18, 3, 3, 2);
  cached.past_K = Matrix::Ones(1, 2);
  cached.past_V = Matrix::Ones(1, 3);
  CHECK_THROWS_SAYING(attn::decode(cached),
                      "decode builds the KV cache itself, token by token: give the tokens' Q, K and V "
                      "(or X with W_Q, W_K and W_V) without past_K and past_V");
  CHECK_THROWS_SAYING(attn::decode(direct(19, 2, 3, 2)),
                      "decode needs one key and one value per query (each token generated brings its "
                      "own): Q has 2 rows but K has 3");
  CHECK_THROWS_SAYING(attn::decode(in_columns(direct(19, 2, 3, 2))),
                      "decode needs one key and one value per query (each token generated brings its "
                      "own): Q has 2 columns but K has 3");
  Problem cross = gqa_projection(20, 3);
  cross.X_kv = attn::RandomState(21).randn(3, 8);
  CHECK_THROWS_SAYING(attn::decode(cross),
                      "decode runs self-attention as a model generates it: give X without X_kv "
                      "(cross-attention reads a sequence that is not generated)");
  Problem shuffled = direct(22, 3, 3, 2);
  shuffled.options.query_positions = {0, 5, 6};
  shuffled.options.key_positions = {0, 5, 2};
  CHECK_THROWS_SAYING(attn::decode(shuffled),
                      "decode: positions.keys entry 3 (2) is not after positions.queries entry 2 (5): "
                      "token 3 is generated after token 2, so its key must sit at a later position");
  Problem long_one;
  long_one.Q = long_one.K = long_one.V = Matrix::Ones(attn::kMaxDecodeTokens + 1, 1);
  CHECK_THROWS_SAYING(attn::decode(long_one),
                      "decode runs one trace per token: at most 1024 tokens are accepted (got 1025)");
  // The problem's own errors come first, as run() gives them.
  Problem bad = direct(23, 3, 3, 2);
  bad.V = Matrix::Ones(2, 3);
  CHECK_THROWS_SAYING(attn::decode(bad), Catch::StartsWith("K has 3 rows but V has 2"));
}

// ---------------------------------------------------------------------------------------------
// tiles

namespace {

/// The tiles' output against run(), and the recurrences of every visited tile, recomputed here:
/// m' = max(m, rowmax(T)), ℓ' = e^(m − m')·ℓ + rowsum(e^(T − m')), Õ' = e^(m − m')·Õ +
/// e^(T − m')·V_j; each tile starts where the previous one of its query block ended.
void check_tiles(const Problem& p, Eigen::Index bq, Eigen::Index bk, double tolerance = 1e-12) {
  INFO("block_q " << bq << ", block_k " << bk);
  const attn::Trace trace = attn::run(p);
  const attn::Tiles t = attn::tiles(p, bq, bk);
  const Matrix diff = (t.output - trace.output).cwiseAbs();
  for (Eigen::Index i = 0; i < diff.size(); ++i) {
    const double a = t.output.data()[i], b = trace.output.data()[i];
    if (std::isnan(a) || std::isnan(b)) {
      CHECK((std::isnan(a) && std::isnan(b)));
    } else {
      CHECK(diff.data()[i] <= tolerance);
    }
  }
  CHECK(t.max_difference <= tolerance);
  const bool columns = p.options.layout == attn::Layout::Columns;
  const attn::Tile* previous = nullptr;  // the tile before, skipped or not
  const attn::Tile* last = nullptr;      // the last visited tile of the current query block
  int visited = 0, skipped = 0;
  for (const attn::Tile& tile : t.tiles) {
    INFO("head " << tile.head << ", tile (" << tile.q_block << ", " << tile.k_block << ")");
    const bool first = previous == nullptr || previous->head != tile.head || previous->q_block != tile.q_block;
    CHECK(tile.k_block == (first ? 0 : previous->k_block + 1));
    CHECK(tile.k_first == tile.k_block * std::min(bk, trace.keys));
    if (first) last = nullptr;
    previous = &tile;
    if (tile.skipped) {
      ++skipped;
      CHECK(tile.scores.size() == 0);
      // Every score of a skipped tile is hidden: its weights are 0.
      const Matrix weights = rows_of(values(trace, "weights", tile.head), p);
      CHECK(weights.block(tile.q_first, tile.k_first, tile.q_count, tile.k_count).cwiseAbs().maxCoeff() == 0);
      continue;
    }
    ++visited;
    const Matrix T = columns ? Matrix(tile.scores.transpose()) : tile.scores;
    const Matrix before = columns ? Matrix(tile.partial_before.transpose()) : tile.partial_before;
    const Matrix after = columns ? Matrix(tile.partial_after.transpose()) : tile.partial_after;
    const bool cached = p.past_V.has_value();
    const Matrix V =
        rows_of(values(trace, cached ? "V_cache" : "V", tile.head), p).middleRows(tile.k_first, tile.k_count);
    for (Eigen::Index r = 0; r < tile.q_count; ++r) {
      const double m = tile.m_before[r], m2 = tile.m_after[r];
      CHECK(m2 == std::max(m, T.row(r).maxCoeff()));
      const double factor = m2 == -kInf ? 1 : std::exp(m - m2);
      CHECK(tile.rescale[r] == Approx(factor).epsilon(1e-15));
      double sum = 0;
      Eigen::RowVectorXd weighted = Eigen::RowVectorXd::Zero(V.cols());
      for (Eigen::Index c = 0; c < tile.k_count; ++c) {
        const double e = T(r, c) == -kInf ? 0 : std::exp(T(r, c) - m2);
        sum += e;
        weighted += e * V.row(c);
      }
      CHECK(tile.l_after[r] == Approx(factor * tile.l_before[r] + sum).epsilon(1e-14));
      CHECK((after.row(r) - (factor * before.row(r) + weighted)).cwiseAbs().maxCoeff() <= 1e-13);
      if (last == nullptr) {  // the start: m = -inf, l = 0, or a sink's m = s, l = 1
        CHECK(((m == -kInf && tile.l_before[r] == 0) || tile.l_before[r] == 1));
      }
    }
    if (last == nullptr) {
      CHECK(before.isZero());
    } else {
      CHECK(tile.m_before == last->m_after);
      CHECK(tile.l_before == last->l_after);
      CHECK(tile.partial_before == last->partial_after);
    }
    last = &tile;
  }
  CHECK(visited == t.visited);
  CHECK(skipped == t.skipped);
}

}  // namespace

TEST_CASE("tiles: the output equals the trace's for every block size", "[practice][tiles]") {
  const Problem p = direct(30, 5, 7, 4);
  for (Eigen::Index bq : {1, 2, 3, 7, 5}) {
    for (Eigen::Index bk : {1, 2, 3, 7, 5}) check_tiles(p, bq, bk);
  }
}

TEST_CASE("tiles: masks, causal, windows and fully masked rows", "[practice][tiles]") {
  SECTION("causal: the blocks above the diagonal are skipped") {
    Problem p = direct(31, 6, 6, 4);
    p.options.causal = true;
    check_tiles(p, 2, 2);
    const attn::Tiles t = attn::tiles(p, 2, 2);
    CHECK(t.visited == 6);
    CHECK(t.skipped == 3);
    CHECK(t.tiles[1].skipped);  // query block 0, key block 1
    for (Eigen::Index b : {1, 3, 7}) check_tiles(p, b, b);
  }
  SECTION("a window [2, 0] and sink tokens") {
    Problem p = direct(32, 7, 7, 4);
    p.options.window_left = 2;
    p.options.window_right = 0;
    check_tiles(p, 2, 2);
    p.options.sink_tokens = 1;
    check_tiles(p, 3, 2);
  }
  SECTION("a fully masked row: zeros as run() gives, or NaN with fully_masked nan") {
    Problem p = direct(33, 4, 5, 2);
    p.options.mask = Matrix::Ones(4, 5);
    p.options.mask->row(2).setZero();
    (*p.options.mask)(0, 4) = 0;
    p.options.mask_kind = attn::MaskKind::Keep;
    for (Eigen::Index b : {1, 2, 3}) check_tiles(p, b, b);
    const attn::Tiles t = attn::tiles(p, 1, 5);
    CHECK(t.output.row(2).isZero());
    p.options.fully_masked = attn::FullyMasked::NaN;
    check_tiles(p, 2, 2);
    CHECK(std::isnan(attn::tiles(p, 2, 2).output(2, 0)));
  }
  SECTION("an additive mask") {
    Problem p = direct(34, 4, 5, 2);
    p.options.mask = attn::RandomState(35).randn(4, 5);
    (*p.options.mask)(1, 1) = -kInf;
    check_tiles(p, 2, 3);
  }
}

TEST_CASE("tiles: heads, GQA, W_O, RoPE, ALiBi, a softcap, a sink, the cache, the columns layout",
          "[practice][tiles]") {
  Problem p = gqa_projection(36, 6);
  p.options.rope.on = true;
  p.options.alibi = true;
  p.options.softcap = 3;
  p.options.sink_logit = {0.25, -1, -kInf, 2};
  p.options.causal = true;
  check_tiles(p, 4, 4);
  check_tiles(p, 3, 1);
  check_tiles(in_columns(p), 2, 5);
  Problem cached = direct(37, 2, 3, 4);
  cached.past_K = attn::RandomState(38).randn(4, 4);
  cached.past_V = attn::RandomState(39).randn(4, 3);
  cached.options.causal = true;
  const attn::Tiles t = attn::tiles(cached, 1, 2);
  CHECK(t.max_difference <= 1e-12);
  CHECK(t.tiles.size() == 2 * 4);  // 7 keys in blocks of 2
}

TEST_CASE("tiles: float32 computes in float32, close to the trace", "[practice][tiles]") {
  Problem p = gqa_projection(40, 5);
  p.options.precision = attn::Precision::Float32;
  const attn::Tiles t = attn::tiles(p, 2, 2);
  CHECK(t.element_bytes == 4);
  CHECK(t.max_difference > 0);
  CHECK(t.max_difference < 1e-5);
}

TEST_CASE("tiles: bytes between HBM and SRAM, counted by hand", "[practice][tiles]") {
  // L = S = 4, d_k = 2, d_v = 3, one head, blocks of 2, float64.
  // standard: Q 8 + K 8 + V 12 + O 12 + S written, read, P written, read 4·16 = 104 elements.
  // flash: per query block Q_i 2·2 + O_i 2·3 + 2 key blocks of K_j 2·2 + V_j 2·3 = 30; two blocks: 60.
  Problem p = direct(41, 4, 4, 2);
  const attn::Tiles t = attn::tiles(p, 2, 2);
  CHECK(t.bytes_standard == 104 * 8);
  CHECK(t.bytes_flash == 60 * 8);
  // Causal skips query block 0's key block 1: 10 elements fewer. A mask matrix adds its entries
  // to both (16 standard, 3 visited tiles of 4 flash).
  p.options.causal = true;
  CHECK(attn::tiles(p, 2, 2).bytes_flash == 50 * 8);
  p.options.mask = Matrix::Ones(4, 4);
  p.options.mask_kind = attn::MaskKind::Keep;
  CHECK(attn::tiles(p, 2, 2).bytes_standard == 120 * 8);
  CHECK(attn::tiles(p, 2, 2).bytes_flash == 62 * 8);
  p.options.precision = attn::Precision::Float32;
  CHECK(attn::tiles(p, 2, 2).bytes_flash == 62 * 4);
  // Blocks larger than the sequence are the sequence: one tile.
  const attn::Tiles whole = attn::tiles(direct(41, 4, 4, 2), 100, 100);
  CHECK(whole.tiles.size() == 1);
  CHECK(whole.block_q == 100);
  CHECK(whole.bytes_flash == 8 * (4 * 2 + 4 * 3 + 4 * 5));
}

TEST_CASE("tiles: bad block sizes get a clear error", "[practice][tiles]") {
  const Problem p = direct(42, 3, 3, 2);
  CHECK_THROWS_SAYING(attn::tiles(p, 0, 2), "block_q must be a positive integer, got number 0");
  CHECK_THROWS_SAYING(attn::tiles(p, 2, -1), "block_k must be a positive integer, got number -1");
  CHECK_THROWS_SAYING(attn::check_block_size("block_k", 2.5), "block_k must be a positive integer, got number 2.5");
  Problem overflow;
  overflow.Q = Matrix::Constant(2, 1, 1e200);
  overflow.K = Matrix::Constant(2, 1, 1e200);
  overflow.V = Matrix::Ones(2, 1);
  overflow.options.scale.kind = attn::Scale::Kind::None;
  CHECK_THROWS_SAYING(attn::tiles(overflow, 1, 1), Catch::Contains("which no running max can rescale"));
  // Tiles of one query and one key over 2048 tokens would hold 100 million numbers.
  Problem many;
  many.Q = many.K = many.V = Matrix::Ones(2048, 1);
  CHECK_THROWS_SAYING(attn::tiles(many, 1, 1),
                      "the tiles of this problem would hold 100663296 numbers; the most accepted is 67108864 "
                      "(larger blocks, fewer tokens or heads)");
  CHECK(attn::tiles(many, 512, 512).tiles.size() == 16);
}

// ---------------------------------------------------------------------------------------------
// the online softmax

TEST_CASE("online softmax: the running max and sum, entry by entry", "[practice][online]") {
  const attn::OnlineSoftmax s = attn::online_softmax({1, 3, 2}, true, attn::Precision::Float64);
  REQUIRE(s.steps.size() == 3);
  CHECK(s.steps[0].m_before == -kInf);
  CHECK(s.steps[0].m_after == 1);
  CHECK(s.steps[0].rescale == 0);
  CHECK(s.steps[0].l_after == 1);
  CHECK(s.steps[1].m_after == 3);
  CHECK(s.steps[1].rescale == Approx(std::exp(-2.0)).epsilon(1e-15));
  CHECK(s.steps[1].l_after == Approx(std::exp(-2.0) + 1).epsilon(1e-15));
  CHECK(s.steps[2].m_after == 3);
  CHECK(s.steps[2].rescale == 1);
  const double sum = std::exp(-2.0) + 1 + std::exp(-1.0);
  CHECK(s.sum == Approx(sum).epsilon(1e-15));
  CHECK(s.max == 3);
  CHECK(s.weights[0] == Approx(std::exp(-2.0) / sum).epsilon(1e-15));
  CHECK(s.weights[1] == Approx(1 / sum).epsilon(1e-15));
  CHECK(s.warnings.empty());
  // A hidden entry gets weight 0; only hidden entries: all 0.
  const attn::OnlineSoftmax hidden = attn::online_softmax({-kInf, 0}, true, attn::Precision::Float64);
  CHECK(hidden.steps[0].rescale == 1);
  CHECK(hidden.weights[0] == 0);
  CHECK(hidden.weights[1] == 1);
  CHECK(attn::online_softmax({-kInf}, true, attn::Precision::Float64).weights[0] == 0);
}

TEST_CASE("online softmax: without subtracting the max, float32 overflows", "[practice][online]") {
  const attn::OnlineSoftmax raw = attn::online_softmax({100, 1}, false, attn::Precision::Float32);
  CHECK(raw.steps[0].m_after == 0);
  CHECK(raw.steps[0].l_after == kInf);  // e^100 > 3.4e38
  CHECK(std::isnan(raw.weights[0]));    // inf / inf
  CHECK(raw.weights[1] == 0);           // e / inf
  REQUIRE(raw.warnings.size() == 1);
  CHECK(said(raw.warnings[0]) == "warning.exp_overflow(precision=float32, entry=1, x=100)");
  const attn::OnlineSoftmax safe = attn::online_softmax({100, 1}, true, attn::Precision::Float32);
  CHECK(safe.weights[0] == Approx(1 / (1 + std::exp(-99.0))).epsilon(1e-7));
  CHECK(safe.warnings.empty());
  // float64 holds e^100 (overflow starts past 709.78).
  const attn::OnlineSoftmax wide = attn::online_softmax({100, 1}, false, attn::Precision::Float64);
  CHECK(wide.weights[0] == Approx(1 / (1 + std::exp(-99.0))).epsilon(1e-15));
  CHECK(wide.sum == Approx(std::exp(100.0) + std::exp(1.0)).epsilon(1e-15));
}

TEST_CASE("online softmax: bad rows get a clear error", "[practice][online]") {
  CHECK_THROWS_SAYING(attn::online_softmax({}, true, attn::Precision::Float64),
                      "the row is empty: a softmax needs at least one number");
  CHECK_THROWS_SAYING(attn::online_softmax({1, kInf}, true, attn::Precision::Float64),
                      "entry 2 of the row is inf: expected a finite number or -inf (a hidden entry)");
  CHECK_THROWS_SAYING(attn::online_softmax({1, std::nan("")}, true, attn::Precision::Float64),
                      "entry 2 of the row is nan: expected a finite number or -inf (a hidden entry)");
  CHECK_THROWS_SAYING(attn::online_softmax({1e39}, true, attn::Precision::Float32),
                      "entry 1 of the row is 1e+39: expected a finite number or -inf (a hidden "
                      "entry) within float32's range");
}
