// numpy's legacy RandomState stream (numpy/random/_mt19937.pyx, mtrand.pyx and
// src/distributions + src/legacy), re-implemented so C++ reproduces np.random.seed(s) examples
// bit for bit. Checked against numpy by tests/fixtures/numpy_random.txt.
#include "numpy_random.h"

#include <cmath>
#include <string>

namespace attn {
namespace {

constexpr int kStateWords = 624;  // MT19937's N
constexpr int kShift = 397;       // MT19937's M
constexpr std::uint32_t kMatrixA = 0x9908b0dfU;
constexpr std::uint32_t kUpperMask = 0x80000000U;
constexpr std::uint32_t kLowerMask = 0x7fffffffU;

/// Refills all 624 words at once, as numpy's mt19937_gen does (the reference MT19937 twist).
void twist(std::array<std::uint32_t, 624>& key) {
  for (int i = 0; i < kStateWords; ++i) {
    const std::uint32_t y = (key[i] & kUpperMask) | (key[(i + 1) % kStateWords] & kLowerMask);
    key[i] = key[(i + kShift) % kStateWords] ^ (y >> 1) ^ ((y & 1U) ? kMatrixA : 0U);
  }
}

/// Smallest all-ones bit mask covering `max` (numpy's gen_mask).
std::uint64_t covering_mask(std::uint64_t max) {
  std::uint64_t mask = max;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  mask |= mask >> 32;
  return mask;
}

/// numpy's mt19937_next64: the first 32-bit draw is the HIGH half.
std::uint64_t next_uint64(RandomState& rs) {
  const std::uint64_t high = rs.next_uint32();
  const std::uint64_t low = rs.next_uint32();
  return (high << 32) | low;
}

/// One value of random_bounded_uint64_fill with use_masked=True (legacy RandomState always
/// masks, never Lemire): a uniform integer in [0, range], range inclusive.
std::uint64_t bounded_masked(RandomState& rs, std::uint64_t range) {
  if (range == 0) return 0;  // numpy draws nothing at all here
  if (range <= 0xFFFFFFFFULL) {
    // Ranges that fit 32 bits consume one 32-bit word per try. numpy's "buffered" uint32
    // helpers ignore their buffer, so array and scalar calls draw the same words.
    if (range == 0xFFFFFFFFULL) return rs.next_uint32();
    const auto mask = static_cast<std::uint32_t>(covering_mask(range));
    std::uint32_t value;
    while ((value = (rs.next_uint32() & mask)) > range) {
    }
    return value;
  }
  if (range == ~std::uint64_t{0}) return next_uint64(rs);
  const std::uint64_t mask = covering_mask(range);
  std::uint64_t value;
  while ((value = (next_uint64(rs) & mask)) > range) {
  }
  return value;
}

void check_shape(Eigen::Index rows, Eigen::Index cols, const char* what) {
  if (rows < 0 || cols < 0) {
    throw input_error(ErrorPlace("size"), "random-size",
                      {{"function", what}, {"rows", std::to_string(rows)}, {"cols", std::to_string(cols)}});
  }
}

}  // namespace

RandomState::RandomState(std::uint32_t seed) { this->seed(seed); }

void RandomState::seed(std::uint32_t seed) {
  // np.random.seed(int) -> _legacy_seeding -> mt19937_seed: Knuth's init_genrand
  // (not init_by_array, which numpy uses only for arrays and the new Generator API).
  std::uint32_t word = seed;
  for (int pos = 0; pos < kStateWords; ++pos) {
    state_[pos] = word;
    word = 1812433253U * (word ^ (word >> 30)) + static_cast<std::uint32_t>(pos + 1);
  }
  position_ = kStateWords;  // the first draw twists
  // Legacy seeding also forgets the cached polar-method value.
  has_gauss_ = false;
  cached_gauss_ = 0.0;
}

std::uint32_t RandomState::next_uint32() {
  if (position_ >= kStateWords) {
    twist(state_);
    position_ = 0;
  }
  std::uint32_t y = state_[position_++];
  // MT19937 tempering.
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= (y >> 18);
  return y;
}

double RandomState::random_sample() {
  // 27 + 26 bits from two words; both are drawn even though the first word's are "enough".
  const std::uint32_t a = next_uint32() >> 5;
  const std::uint32_t b = next_uint32() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

double RandomState::standard_normal() {
  // legacy_gauss: Marsaglia's polar method; each accepted pair yields two values, the
  // second is returned by the next call (and survives across randn/normal calls).
  if (has_gauss_) {
    has_gauss_ = false;
    const double cached = cached_gauss_;
    cached_gauss_ = 0.0;
    return cached;
  }
  double x1;
  double x2;
  double r2;
  do {
    x1 = 2.0 * random_sample() - 1.0;
    x2 = 2.0 * random_sample() - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  const double f = std::sqrt(-2.0 * std::log(r2) / r2);
  cached_gauss_ = f * x1;
  has_gauss_ = true;
  return f * x2;
}

Matrix RandomState::randn(Eigen::Index rows, Eigen::Index cols) {
  check_shape(rows, cols, "randn");
  Matrix out(rows, cols);
  // Row-major storage, so a flat walk is numpy's C order.
  for (Eigen::Index i = 0; i < out.size(); ++i) out.data()[i] = standard_normal();
  return out;
}

Matrix RandomState::normal(Eigen::Index rows, Eigen::Index cols, double loc, double scale) {
  check_shape(rows, cols, "normal");
  // numpy's check (CONS_NON_NEGATIVE): a set sign bit is an error, NaN passes through.
  if (std::signbit(scale) && !std::isnan(scale)) throw input_error(ErrorPlace("scale"), "random-scale");
  Matrix out(rows, cols);
  // legacy_normal computes loc + scale * gauss, even for loc 0 and scale 1.
  for (Eigen::Index i = 0; i < out.size(); ++i) out.data()[i] = loc + scale * standard_normal();
  return out;
}

Matrix RandomState::rand(Eigen::Index rows, Eigen::Index cols) {
  check_shape(rows, cols, "rand");
  Matrix out(rows, cols);
  for (Eigen::Index i = 0; i < out.size(); ++i) out.data()[i] = random_sample();
  return out;
}

std::int64_t RandomState::randint(std::int64_t low, std::int64_t high) {
  if (low >= high) {
    throw input_error(ErrorPlace("high", "low"), "random-high",
                      {{"high", std::to_string(high)}, {"low", std::to_string(low)}});
  }
  // numpy makes high inclusive (high - 1) and samples an offset in [0, high - 1 - low];
  // unsigned arithmetic keeps the full int64 span free of overflow.
  const std::uint64_t range = static_cast<std::uint64_t>(high) - 1U - static_cast<std::uint64_t>(low);
  const std::uint64_t value = static_cast<std::uint64_t>(low) + bounded_masked(*this, range);
  return static_cast<std::int64_t>(value);
}

Matrix RandomState::randint(std::int64_t low, std::int64_t high, Eigen::Index rows, Eigen::Index cols) {
  check_shape(rows, cols, "randint");
  // Validate before drawing, as numpy does even for an empty size.
  if (low >= high) randint(low, high);
  Matrix out(rows, cols);
  for (Eigen::Index i = 0; i < out.size(); ++i) {
    out.data()[i] = static_cast<double>(randint(low, high));
  }
  return out;
}

}  // namespace attn
