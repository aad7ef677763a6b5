// The output-only path (fast_attention.h) against the trace core attn::run, in float32 and
// float64, for every size class the tiles and vector kernels split on, with masks, -inf, causal
// L != S, overflow, the seeds' numbers and the accuracy of the vectorised exp. Natively this
// tests the Eigen kernels; the wasm build of the same suite tests the SIMD128 kernels.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attention.h"
#include "fast_attention.h"
#include "numpy_random.h"
#include "printed.h"
#include "english.h"

using attn::FastOptions;
using attn::Matrix;
using attn::RowMajorMatrix;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Largest |fast - reference| relative to max(1, largest |reference|).
template <typename T>
double relative_error(const RowMajorMatrix<T>& fast, const Matrix& reference) {
  REQUIRE(fast.rows() == reference.rows());
  REQUIRE(fast.cols() == reference.cols());
  const double scale = std::max(1.0, reference.cwiseAbs().maxCoeff());
  double worst = 0;
  for (Eigen::Index i = 0; i < fast.rows(); ++i) {
    for (Eigen::Index j = 0; j < fast.cols(); ++j) {
      const double a = static_cast<double>(fast(i, j)), b = reference(i, j);
      if (a == b) continue;  // also +-inf == +-inf
      worst = std::max(worst, std::abs(a - b));
    }
  }
  return worst / scale;
}

template <typename T>
constexpr double tolerance() {
  // float32: both sides round the scores, sums and exps in float32, in different orders.
  return sizeof(T) == 4 ? 2e-5 : 1e-12;
}

template <typename T>
constexpr attn::Precision precision() {
  return sizeof(T) == 4 ? attn::Precision::Float32 : attn::Precision::Float64;
}

struct Case {
  Matrix Q, K, V;
};

Case random_case(unsigned seed, Eigen::Index L, Eigen::Index S, Eigen::Index d, Eigen::Index dv) {
  attn::RandomState rng(seed);
  return {rng.randn(L, d), rng.randn(S, d), rng.randn(S, dv)};
}

/// attn::run on the same numbers, as the reference.
Matrix core_output(const Case& c, attn::Precision p, const FastOptions& o,
                   const std::optional<Matrix>& mask = std::nullopt, attn::MaskKind kind = attn::MaskKind::Additive) {
  attn::Problem problem;
  problem.Q = c.Q;
  problem.K = c.K;
  problem.V = c.V;
  problem.options.precision = p;
  problem.options.causal = o.causal;
  if (!std::isnan(o.scale)) problem.options.scale = {attn::Scale::Kind::Multiply, o.scale};
  if (!std::isnan(o.divisor)) problem.options.scale = {attn::Scale::Kind::DivideBy, o.divisor};
  problem.options.mask = mask;
  problem.options.mask_kind = kind;
  return attn::run(problem).output;
}

template <typename T>
RowMajorMatrix<T> fast_output(const Case& c, const FastOptions& o,
                              const std::optional<Matrix>& additive = std::nullopt) {
  const RowMajorMatrix<T> mask = additive ? RowMajorMatrix<T>(additive->cast<T>()) : RowMajorMatrix<T>();
  return attn::fast_attention<T>(c.Q.cast<T>(), c.K.cast<T>(), c.V.cast<T>(), o, mask);
}

/// Runs the raw-pointer form and returns its report.
template <typename T>
attn::FastReport fast_raw(const Case& c, const FastOptions& o, RowMajorMatrix<T>& out, const T* additive = nullptr,
                          const std::uint8_t* keep = nullptr) {
  const RowMajorMatrix<T> q = c.Q.cast<T>(), k = c.K.cast<T>(), v = c.V.cast<T>();
  attn::FastProblem<T> p;
  p.Q = q.data();
  p.K = k.data();
  p.V = v.data();
  p.L = q.rows();
  p.S = k.rows();
  p.d_k = q.cols();
  p.d_v = v.cols();
  p.additive_mask = additive;
  p.keep_mask = keep;
  out.resize(p.L, p.d_v);
  return attn::fast_attention<T>(p, o, out.data());
}

}  // namespace

TEMPLATE_TEST_CASE("fast path equals attn::run for every size class", "[fast]", float, double) {
  // Sizes around the vector widths (4 / 2 lanes, tiles padded to 8 / 4), the register tile of
  // 4 rows, the query blocks (32 / 64 rows) and the key tiles (64 / 128 / 256 keys).
  const auto L = GENERATE(as<Eigen::Index>{}, 1, 2, 3, 4, 5, 7, 33, 65, 130);
  const auto S = GENERATE(as<Eigen::Index>{}, 1, 3, 8, 9, 64, 129, 257, 300);
  const auto d = GENERATE(as<Eigen::Index>{}, 1, 5, 64);
  const Eigen::Index dv = d == 64 ? 64 : d + 2;
  CAPTURE(L, S, d, dv);
  const Case c = random_case(static_cast<unsigned>(L * 7919 + S * 31 + d), L, S, d, dv);
  FastOptions o;
  CHECK(relative_error(fast_output<TestType>(c, o), core_output(c, precision<TestType>(), o)) <= tolerance<TestType>());
  o.causal = true;
  CHECK(relative_error(fast_output<TestType>(c, o), core_output(c, precision<TestType>(), o)) <= tolerance<TestType>());
}

TEMPLATE_TEST_CASE("fast path: explicit scale, large scores, one key", "[fast]", float, double) {
  const Case c = random_case(11, 40, 200, 16, 24);
  for (double scale : {1.0, 0.05, 3.0, -0.7}) {
    CAPTURE(scale);
    FastOptions o;
    o.scale = scale;
    // Scale 3 makes scores of tens: the softmax is nearly one-hot, exps reach e^-100.
    CHECK(relative_error(fast_output<TestType>(c, o), core_output(c, precision<TestType>(), o)) <=
          tolerance<TestType>());
  }
  const Case one = random_case(12, 9, 1, 3, 2);  // one key: every weight is 1
  const auto out = fast_output<TestType>(one, FastOptions{});
  for (Eigen::Index i = 0; i < out.rows(); ++i) {
    CHECK(out(i, 0) == static_cast<TestType>(one.V(0, 0)));
    CHECK(out(i, 1) == static_cast<TestType>(one.V(0, 1)));
  }
}

TEMPLATE_TEST_CASE("fast path: causal with L != S, both ways, across tiles", "[fast]", float, double) {
  FastOptions o;
  o.causal = true;
  for (auto [L, S] : {std::pair<int, int>{3, 700}, {700, 3}, {100, 299}, {299, 100}, {1, 1}}) {
    CAPTURE(L, S);
    const Case c = random_case(static_cast<unsigned>(L + 5 * S), L, S, 8, 8);
    CHECK(relative_error(fast_output<TestType>(c, o), core_output(c, precision<TestType>(), o)) <=
          tolerance<TestType>());
  }
}

TEMPLATE_TEST_CASE("fast path: additive masks with -inf, keep masks, fully masked rows", "[fast]", float, double) {
  const Eigen::Index L = 37, S = 290;
  const Case c = random_case(21, L, S, 12, 7);
  attn::RandomState rng(22);
  const Matrix u = rng.rand(L, S);
  Matrix additive = (rng.randn(L, S) * 2.0).eval();
  Matrix keep(L, S);
  for (Eigen::Index i = 0; i < L; ++i) {
    for (Eigen::Index j = 0; j < S; ++j) {
      if (u(i, j) < 0.3) additive(i, j) = -kInf;
      keep(i, j) = u(i, j) < 0.5 ? 0 : 1;
    }
  }
  // Row 4 hides every key; row 9 sees one key only, in the last (partial) tile.
  additive.row(4).setConstant(-kInf);
  keep.row(4).setZero();
  additive.row(9).setConstant(-kInf);
  additive(9, S - 1) = 0.5;
  keep.row(9).setZero();
  keep(9, S - 1) = 1;

  for (bool causal : {false, true}) {
    CAPTURE(causal);
    FastOptions o;
    o.causal = causal;
    // Rows whose visible keys are all hidden (causal: a row sees keys j <= i only).
    Eigen::Index fully_masked = 0;
    for (Eigen::Index i = 0; i < L; ++i) {
      bool any = false;
      for (Eigen::Index j = 0; j < S && !(causal && j > i); ++j) any = any || additive(i, j) != -kInf;
      fully_masked += any ? 0 : 1;
    }
    CHECK(fully_masked >= 1);

    RowMajorMatrix<TestType> out;
    const RowMajorMatrix<TestType> add_t = additive.cast<TestType>();
    const auto report = fast_raw<TestType>(c, o, out, add_t.data());
    CHECK(report.fully_masked_rows == fully_masked);
    CHECK(report.exact_rows == 0);
    CHECK(relative_error(out, core_output(c, precision<TestType>(), o, additive)) <= tolerance<TestType>());
    CHECK(out.row(4).isZero(0));
    if (!causal) CHECK(out.row(9).template cast<double>().isApprox(c.V.row(S - 1), 1e-6));

    std::vector<std::uint8_t> keep_bytes(static_cast<size_t>(L * S));
    for (Eigen::Index i = 0; i < L * S; ++i) keep_bytes[static_cast<size_t>(i)] = keep.data()[i] != 0;
    const auto keep_report = fast_raw<TestType>(c, o, out, nullptr, keep_bytes.data());
    Eigen::Index keep_fully_masked = 0;
    for (Eigen::Index i = 0; i < L; ++i) {
      bool any = false;
      for (Eigen::Index j = 0; j < S && !(causal && j > i); ++j) any = any || keep(i, j) != 0;
      keep_fully_masked += any ? 0 : 1;
    }
    CHECK(keep_report.fully_masked_rows == keep_fully_masked);
    CHECK(relative_error(out, core_output(c, precision<TestType>(), o, keep, attn::MaskKind::Keep)) <=
          tolerance<TestType>());
  }
}

TEMPLATE_TEST_CASE("fast path: scores that overflow share the weight as the core does", "[fast]", float, double) {
  Case c = random_case(31, 6, 70, 4, 3);
  // Rows 1 and 2 meet keys 5 and 60 with a score of +inf after scaling; row 3 with NaN-free
  // huge negative scores except one key.
  const double big = sizeof(TestType) == 4 ? 1e20 : 1e160;
  c.Q.row(1).setConstant(big);
  c.Q.row(2).setConstant(big);
  c.K.row(5).setConstant(big);
  c.K.row(60).setConstant(big);
  RowMajorMatrix<TestType> out;
  const auto report = fast_raw<TestType>(c, FastOptions{}, out);
  CHECK(report.exact_rows == 2);
  // Rows 1 and 2 as the core computes them. (The other rows meet huge finite scores, where the
  // core's exp(x - logsumexp) loses the sum to rounding; they are not compared.)
  const Matrix core = core_output(c, precision<TestType>(), FastOptions{});
  const RowMajorMatrix<TestType> rows12 = out.middleRows(1, 2);
  CHECK(relative_error(rows12, Matrix(core.middleRows(1, 2))) <= tolerance<TestType>());
  for (Eigen::Index k = 0; k < 3; ++k) {
    CHECK(static_cast<double>(out(1, k)) == Approx((c.V(5, k) + c.V(60, k)) / 2).epsilon(1e-6));
  }
}

TEMPLATE_TEST_CASE("fast path: a long key sequence against a float64 reference row by row", "[fast][long]", float,
                   double) {
  const Eigen::Index L = 19, S = 20000, d = 64;
  const Case c = random_case(41, L, S, d, d);
  const auto out = fast_output<TestType>(c, FastOptions{});
  for (Eigen::Index i = 0; i < L; ++i) {
    const Eigen::VectorXd scores = (c.K * c.Q.row(i).transpose()) / 8.0;
    const Eigen::VectorXd w = (scores.array() - scores.maxCoeff()).exp();
    const Eigen::RowVectorXd expected = (w.transpose() * c.V) / w.sum();
    const double err = (out.row(i).template cast<double>() - expected).cwiseAbs().maxCoeff();
    CAPTURE(i);
    CHECK(err <= (sizeof(TestType) == 4 ? 1e-5 : 1e-12));
  }
}

TEMPLATE_TEST_CASE("fast path: query rows in chunks (row_offset) equal the whole problem", "[fast]", float, double) {
  const Eigen::Index L = 150, S = 170, d = 9, dv = 4;
  const Case c = random_case(61, L, S, d, dv);
  attn::RandomState rng(62);
  Matrix additive = rng.randn(L, S);
  for (Eigen::Index i = 0; i < L; ++i) {
    for (Eigen::Index j = 0; j < S; ++j) additive(i, j) = additive(i, j) < -1 ? -kInf : additive(i, j);
  }
  const RowMajorMatrix<TestType> q = c.Q.cast<TestType>(), k = c.K.cast<TestType>(), v = c.V.cast<TestType>(),
                                 m = additive.cast<TestType>();
  FastOptions o;
  o.causal = true;
  RowMajorMatrix<TestType> whole;
  fast_raw<TestType>(c, o, whole, m.data());
  RowMajorMatrix<TestType> chunked(L, dv);
  for (Eigen::Index r0 = 0; r0 < L; r0 += 37) {
    attn::FastProblem<TestType> p;
    p.Q = q.data() + r0 * d;
    p.K = k.data();
    p.V = v.data();
    p.L = std::min<Eigen::Index>(37, L - r0);
    p.S = S;
    p.d_k = d;
    p.d_v = dv;
    p.additive_mask = m.data() + r0 * S;
    p.row_offset = r0;
    attn::fast_attention<TestType>(p, o, chunked.data() + r0 * dv);
  }
  // Same tiles over the keys; only the grouping of rows into register tiles may differ.
  CHECK(relative_error(chunked, Matrix(whole.template cast<double>())) <= tolerance<TestType>());
  // Errors name the row of the whole problem.
  RowMajorMatrix<TestType> bad_q = q;
  bad_q(120, 1) = std::numeric_limits<TestType>::quiet_NaN();
  attn::FastProblem<TestType> p;
  p.Q = bad_q.data() + 111 * d;
  p.K = k.data();
  p.V = v.data();
  p.L = 37;
  p.S = S;
  p.d_k = d;
  p.d_v = dv;
  p.row_offset = 111;
  CHECK_THROWS_SAYING(attn::fast_attention<TestType>(p, o, chunked.data()),
                      Catch::StartsWith("Q row 121, column 2 is nan"));
}

TEMPLATE_TEST_CASE("fast path: the seeds' numbers", "[fast][seed]", float, double) {
  // float64 reproduces the printed digits; float32 cannot hold 8 digits through the sums, so it
  // is held to 1e-6 absolute (about 8 float32 ulps at these magnitudes).
  const bool f32 = sizeof(TestType) == 4;
  auto check = [&](const RowMajorMatrix<TestType>& computed, const char* printed, double f32_tolerance = 1e-6) {
    const auto numbers = attn::testing::printed_numbers(printed);
    REQUIRE(static_cast<Eigen::Index>(numbers.size()) == computed.size());
    for (Eigen::Index k = 0; k < computed.size(); ++k) {
      const double v = static_cast<double>(computed.data()[k]);
      CAPTURE(k, v, numbers[static_cast<size_t>(k)].text);
      if (f32) {
        CHECK(std::abs(v - numbers[static_cast<size_t>(k)].value) <= f32_tolerance);
      } else {
        CHECK(attn::testing::matches(v, numbers[static_cast<size_t>(k)]));
      }
    }
  };

  // Seed 004: X = I, W_Q = W_K = I, W_V = [[1, 2], [3, 4]]: Q = K = I, V = W_V.
  Case c;
  c.Q = Matrix::Identity(2, 2);
  c.K = Matrix::Identity(2, 2);
  c.V = Matrix(2, 2);
  c.V << 1, 2, 3, 4;
  check(fast_output<TestType>(c, FastOptions{}), "[[1.6604769 2.6604769]\n [2.3395231 3.3395231]]");

  // Seed 000: np.random.seed(42); q, k, v = randn(4, 8) each; the printed output's first row.
  attn::RandomState rng(42);
  Case s0;
  s0.Q = rng.randn(4, 8);
  s0.K = rng.randn(4, 8);
  s0.V = rng.randn(4, 8);
  const RowMajorMatrix<TestType> row0 = fast_output<TestType>(s0, FastOptions{}).topRows(1);
  check(row0,
        "[-0.1308104   0.77212573  0.10108921  0.16807328 -0.46588684 -0.43681263 "
        "0.46851458 -0.42075407]");

  // Seed 003 computes in float32 and divides by float32(√3): Q, K, V as printed.
  if (f32) {
    Case s3;
    s3.Q = Matrix(3, 3);
    s3.Q << 1, 0, 2, 2, 2, 2, 2, 1, 3;
    s3.K = Matrix(3, 3);
    s3.K << 0, 1, 1, 4, 4, 0, 2, 3, 1;
    s3.V = Matrix(3, 3);
    s3.V << 1, 2, 3, 2, 8, 0, 2, 6, 3;
    FastOptions o3;
    o3.divisor = std::sqrt(3.0);
    const RowMajorMatrix<TestType> out3 = fast_output<TestType>(s3, o3);
    // As attn::run computes it in float32 (which matches the print to 4 ulps, test_seeds.cpp).
    CHECK(relative_error(out3, core_output(s3, attn::Precision::Float32, o3)) <= 4 * 6e-8 * 8);
    const RowMajorMatrix<TestType> top = out3.topRows(2);
    // The document's own float32 softmax rounds its logits of up to 9.2 in another order: its
    // print and attn::run differ by up to 1.9e-6 as well.
    check(top, "[[1.8638741 , 6.3193707 , 1.7041886 ] [1.9991105 , 7.8141265 , 0.27347228]]", 5e-6);
  }
}

TEMPLATE_TEST_CASE("fast path: divisor_sqrt divides by the root taken in the working precision", "[fast]", float,
                   double) {
  const Case c = random_case(61, 5, 7, 3, 2);
  FastOptions root, plain;
  // A correctly rounded sqrt of float(3) equals float(√3 in double): the same divisor.
  root.divisor_sqrt = 3;
  plain.divisor = std::sqrt(3.0);
  CHECK(fast_output<TestType>(c, root) == fast_output<TestType>(c, plain));
  root.divisor_sqrt = 100;
  plain.divisor = 10;
  CHECK(fast_output<TestType>(c, root) == fast_output<TestType>(c, plain));
  CHECK(relative_error(fast_output<TestType>(c, root), core_output(c, precision<TestType>(), plain)) <=
        tolerance<TestType>());

  root.divisor_sqrt = 0;
  CHECK_THROWS_SAYING(fast_output<TestType>(c, root),
                      "the scale divisor sqrt(n) needs a finite positive n in the working precision "
                      "(got 0)");
  root.divisor_sqrt = -kInf;
  CHECK_THROWS_SAYING(fast_output<TestType>(c, root), Catch::Contains("(got -inf)"));
  // 1e-50 is 0 in float32.
  root.divisor_sqrt = 1e-50;
  if (sizeof(TestType) == 4) {
    CHECK_THROWS_SAYING(fast_output<TestType>(c, root), Catch::Contains("(got 1e-50)"));
  } else {
    CHECK(fast_output<TestType>(c, root).allFinite());
  }
  root.divisor_sqrt = 3;
  root.divisor = 2;
  CHECK_THROWS_SAYING(fast_output<TestType>(c, root), "give a scale or a divisor, not both");
}

TEST_CASE("fast path: the vectorised exp, float32 within 2 ulp", "[fast][exp]") {
  std::vector<float> in;
  for (double x = -87.3; x <= 88.0; x += 0.0007) in.push_back(static_cast<float>(x));
  for (float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-7f, -1e-7f, 0.34657359f, -0.34657359f}) in.push_back(x);
  std::vector<float> out(in.size());
  attn::detail::exp_kernel<float>(in.data(), out.data(), static_cast<Eigen::Index>(in.size()));
  double worst_ulps = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const double exact = std::exp(static_cast<double>(in[i]));
    const float rounded = static_cast<float>(exact);
    const double ulp = std::nextafter(rounded, std::numeric_limits<float>::infinity()) - rounded;
    worst_ulps = std::max(worst_ulps, std::abs(out[i] - exact) / ulp);
  }
  INFO(attn::fast_attention_kernels() << ": worst " << worst_ulps << " ulp over " << in.size());
  // The SIMD128 exp is ours: within 2 ulp (0.95 measured). The portable kernels use Eigen's exp,
  // whose AVX-512 version reaches 4.5 ulp at the ends of the range (0.5 ulp with SSE2).
  const bool ours = std::string(attn::fast_attention_kernels()) == "wasm-simd128";
  CHECK(worst_ulps <= (ours ? 2.0 : 8.0));

  // -inf and far below the normal range give 0 exactly (hidden keys weigh nothing).
  const float low[] = {-std::numeric_limits<float>::infinity(), -1000.0f, -104.0f, -3.4e38f, -88.0f};
  float low_out[5];
  attn::detail::exp_kernel<float>(low, low_out, 5);
  for (float v : low_out) CHECK(v <= 1e-37f);
  CHECK(low_out[0] == 0.0f);
}

TEST_CASE("fast path: the vectorised exp, float64 within 1e-15 relative", "[fast][exp]") {
  std::vector<double> in;
  for (double x = -708.0; x <= 709.0; x += 0.0137) in.push_back(x);
  for (double x = -1.0; x <= 1.0; x += 1.0 / 4096) in.push_back(x);
  std::vector<double> out(in.size());
  attn::detail::exp_kernel<double>(in.data(), out.data(), static_cast<Eigen::Index>(in.size()));
  double worst = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    // std::exp is within 1 ulp; compare relative to it.
    const double exact = std::exp(in[i]);
    worst = std::max(worst, std::abs(out[i] - exact) / exact);
  }
  INFO(attn::fast_attention_kernels() << ": worst relative error " << worst << " over " << in.size());
  CHECK(worst <= 1e-15);
  const double low[] = {-kInf, -1e4, -800.0};
  double low_out[3];
  attn::detail::exp_kernel<double>(low, low_out, 3);
  CHECK(low_out[0] == 0.0);
  CHECK(low_out[1] <= 1e-307);
  CHECK(low_out[2] <= 1e-307);
}

TEMPLATE_TEST_CASE("fast path: errors name the input and the position", "[fast][errors]", float, double) {
  Case c = random_case(51, 3, 4, 2, 2);
  c.Q(1, 0) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_SAYING(fast_output<TestType>(c, FastOptions{}),
                      "Q row 2, column 1 is nan: inputs must be finite numbers (only an additive "
                      "mask may hold -inf)");
  c = random_case(51, 3, 4, 2, 2);
  c.V(3, 1) = -kInf;
  CHECK_THROWS_SAYING(fast_output<TestType>(c, FastOptions{}), Catch::Contains("V row 4, column 2 is -inf"));
  c = random_case(51, 3, 4, 2, 2);
  Matrix mask = Matrix::Zero(3, 4);
  mask(2, 3) = kInf;
  CHECK_THROWS_SAYING(fast_output<TestType>(c, FastOptions{}, mask),
                      "mask row 3, column 4 is inf: an additive mask holds finite numbers or -inf");
  CHECK_THROWS_SAYING(fast_output<TestType>(c, FastOptions{}, Matrix::Zero(3, 3)),
                      "mask is 3x3 but the scores are 3x4 (queries x keys)");
  Case bad = c;
  bad.K = Matrix::Zero(4, 3);
  CHECK_THROWS_SAYING(fast_output<TestType>(bad, FastOptions{}),
                      "Q has 2 columns but K has 3: queries and keys need the same d_k");
  FastOptions o;
  o.scale = kInf;
  CHECK_THROWS_SAYING(fast_output<TestType>(c, o), "scale must be a finite number (got inf)");
  o.divisor = 2;
  o.scale = 1;
  CHECK_THROWS_SAYING(fast_output<TestType>(c, o), "give a scale or a divisor, not both");
  o.scale = std::numeric_limits<double>::quiet_NaN();
  o.divisor = 0;
  CHECK_THROWS_SAYING(fast_output<TestType>(c, o), Catch::Contains("divisor must be a finite nonzero"));
  RowMajorMatrix<TestType> out;
  Case empty;
  empty.Q = Matrix(0, 2);
  empty.K = Matrix::Zero(4, 2);
  empty.V = Matrix::Zero(4, 2);
  CHECK_THROWS_AS(fast_raw<TestType>(empty, FastOptions{}, out), attn::InputError);
}

TEST_CASE("the scale rule that run(), explain and the fast path share", "[fast][scale]") {
  using attn::Scale;
  const auto f = attn::scale_rule<float>(Scale{}, 3);  // the default: divide by √d_k, in float32
  CHECK(f.divide);
  CHECK(f.by == std::sqrt(3.0f));
  CHECK(f.apply(2.0f) == 2.0f / std::sqrt(3.0f));
  CHECK(f.factor() == 1.0 / static_cast<double>(std::sqrt(3.0f)));
  const auto root = attn::scale_rule<double>(Scale{Scale::Kind::DivideBySqrt, 2.0}, 8);
  CHECK((root.divide && root.by == std::sqrt(2.0)));
  const auto by = attn::scale_rule<double>(Scale{Scale::Kind::DivideBy, 4.0}, 8);
  CHECK((by.divide && by.by == 4.0 && by.factor() == 0.25));
  const auto times = attn::scale_rule<float>(Scale{Scale::Kind::Multiply, 0.5}, 8);
  CHECK((!times.divide && times.by == 0.5f && times.apply(3.0f) == 1.5f));
  const auto none = attn::scale_rule<double>(Scale{Scale::Kind::None, 7.0}, 8);
  CHECK((!none.divide && none.by == 1.0));
}
