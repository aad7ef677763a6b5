// Native side of `npm run bench`: single-head attention, one thread, N tokens, d = 64, built with
// g++ -O3 -march=native against the same core as the wasm module.
//
//   eigen  plain Eigen: scores = QKᵀ/√d (N×N), row softmax with Eigen's vectorised exp, · V
//   fast   attn::fast_attention (the output-only path, Eigen kernels natively)
//   core   attn::run (the trace API: every step kept, in double; only for N <= 1024)
//
// Prints one JSON object per line: {"impl","precision","N","d","ms":[per-round medians...]}.
// Usage: bench_native [--rounds R] [--sizes 4,64,256,1024,2048] [--d 64] [--long]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attention.h"
#include "fast_attention.h"

namespace {

template <typename T>
using Mat = attn::RowMajorMatrix<T>;

template <typename T>
Mat<T> random_matrix(std::mt19937& rng, Eigen::Index rows, Eigen::Index cols) {
  std::normal_distribution<double> normal;
  Mat<T> m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<T>(normal(rng));
  return m;
}

/// The plain Eigen implementation the table calls "native Eigen", written as an Eigen user
/// would for speed: the scale folded into Q (an N×d pass, not N×N) and no temporaries behind the
/// two products (noalias). The naive `(Q * K.transpose()) / sqrt(d)` evaluates the product into a
/// temporary and divides in a second N×N pass, 2-3.5x slower at N >= 1024, which made every ratio
/// against it look better than the measurement (recorded runs before 22 Nov 03:00 did so).
template <typename T>
Mat<T> plain_eigen(const Mat<T>& Q, const Mat<T>& K, const Mat<T>& V) {
  Mat<T> scores(Q.rows(), K.rows());
  scores.noalias() = (Q * (T(1) / std::sqrt(static_cast<T>(Q.cols())))) * K.transpose();
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    auto row = scores.row(i).array();
    row = (row - row.maxCoeff()).exp();
    row /= row.sum();
  }
  Mat<T> out(Q.rows(), V.cols());
  out.noalias() = scores * V;
  return out;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Median time of one call, from repetitions lasting at least `budget_ms`.
template <class F>
double time_call(F&& f, double budget_ms) {
  std::vector<double> samples;
  const double start = now_ms();
  do {
    const double t0 = now_ms();
    f();
    samples.push_back(now_ms() - t0);
  } while (now_ms() - start < budget_ms || samples.size() < 3);
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

volatile double sink = 0;

template <typename T>
void bench_size(const char* precision, Eigen::Index N, Eigen::Index d, int round, std::vector<std::string>& lines) {
  std::mt19937 rng(static_cast<unsigned>(N * 1000 + round));
  const Mat<T> Q = random_matrix<T>(rng, N, d), K = random_matrix<T>(rng, N, d), V = random_matrix<T>(rng, N, d);
  const double budget = N <= 64 ? 20 : 60;
  auto emit = [&](const char* impl, double ms) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "{\"impl\":\"%s\",\"precision\":\"%s\",\"N\":%ld,\"d\":%ld,\"round\":%d,\"ms\":%.6f}", impl,
                  precision, static_cast<long>(N), static_cast<long>(d), round, ms);
    lines.push_back(buf);
  };
  emit("eigen", time_call([&] { sink = sink + plain_eigen<T>(Q, K, V)(0, 0); }, budget));
  emit("fast", time_call([&] { sink = sink + attn::fast_attention<T>(Q, K, V)(0, 0); }, budget));
  if (N <= 1024) {
    attn::Problem p;
    p.Q = Q.template cast<double>();
    p.K = K.template cast<double>();
    p.V = V.template cast<double>();
    p.options.precision = sizeof(T) == 4 ? attn::Precision::Float32 : attn::Precision::Float64;
    emit("core", time_call([&] { sink = sink + attn::run(p).output(0, 0); }, budget));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 3;
  std::vector<long> sizes = {4, 64, 256, 1024, 2048};
  long d = 64;
  bool long_sequences = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (a == "--d" && i + 1 < argc)
      d = std::atol(argv[++i]);
    else if (a == "--long")
      long_sequences = true;
    else if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (char* s = std::strtok(argv[++i], ","); s; s = std::strtok(nullptr, ",")) sizes.push_back(std::atol(s));
    }
  }
  std::printf("{\"kernels\":\"%s\"}\n", attn::fast_attention_kernels());
  if (long_sequences) {
    // The output-only path alone, one call per size (ms, ms per query row).
    for (long N : sizes) {
      std::mt19937 rng(static_cast<unsigned>(N));
      const Mat<float> Q = random_matrix<float>(rng, N, d), K = random_matrix<float>(rng, N, d),
                       V = random_matrix<float>(rng, N, d);
      const double ms = time_call([&] { sink = sink + attn::fast_attention<float>(Q, K, V)(0, 0); }, 0);
      std::printf("{\"impl\":\"fast\",\"precision\":\"float32\",\"N\":%ld,\"d\":%ld,\"ms\":%.6f}\n", N, d, ms);
      std::fflush(stdout);
    }
    return 0;
  }
  // Interleaved rounds: every size and precision once per round.
  for (int round = 0; round < rounds; ++round) {
    for (long N : sizes) {
      std::vector<std::string> lines;
      bench_size<float>("float32", N, d, round, lines);
      bench_size<double>("float64", N, d, round, lines);
      for (const auto& l : lines) std::printf("%s\n", l.c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}
