// RandomState against numpy's legacy np.random: the golden streams in
// tests/fixtures/numpy_random.txt (written by make_numpy_random.py) must match bit for bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "numpy_random.h"

#ifndef ATTN_FIXTURES_DIR
#error "ATTN_FIXTURES_DIR must be defined as the absolute path of tests/fixtures"
#endif

namespace {

using attn::Matrix;
using attn::RandomState;

/// One fixture line: an operation, its arguments, and numpy's values (as text, parsed per type).
struct FixtureLine {
  int line_number = 0;
  std::string text;  // the line up to the values, for messages
  std::string op;
  std::vector<std::string> args;
  std::vector<std::string> values;
};

std::vector<FixtureLine> read_fixture() {
  const std::string path = std::string(ATTN_FIXTURES_DIR) + "/numpy_random.txt";
  std::ifstream in(path);
  if (!in) FAIL("cannot open " << path);
  std::vector<FixtureLine> lines;
  std::string raw;
  int number = 0;
  while (std::getline(in, raw)) {
    ++number;
    if (raw.empty() || raw[0] == '#') continue;
    FixtureLine line;
    line.line_number = number;
    const auto colon = raw.find(" : ");
    line.text = raw.substr(0, colon);
    std::istringstream head(line.text);
    head >> line.op;
    for (std::string word; head >> word;) line.args.push_back(word);
    if (colon != std::string::npos) {
      std::istringstream tail(raw.substr(colon + 3));
      for (std::string word; tail >> word;) line.values.push_back(word);
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

// strtod/strtoll read repr() output exactly: the shortest string that round-trips.
double to_double(const std::string& s) { return std::strtod(s.c_str(), nullptr); }
std::int64_t to_int64(const std::string& s) { return std::strtoll(s.c_str(), nullptr, 10); }
long to_long(const std::string& s) { return std::strtol(s.c_str(), nullptr, 10); }

std::string exact(double x) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

/// Compares every value (==, not approximately) and reports the first mismatch, if any, so a
/// broken stream gives one readable failure per line instead of thousands.
void check_doubles(const FixtureLine& line, const std::vector<double>& actual, const std::vector<double>& expected) {
  INFO("fixture line " << line.line_number << ": " << line.text);
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] != expected[i]) {
      FAIL_CHECK("value " << i << ": numpy " << exact(expected[i]) << ", ours " << exact(actual[i]));
      return;
    }
  }
  SUCCEED();
}

void check_doubles(const FixtureLine& line, const std::vector<double>& actual) {
  std::vector<double> expected;
  for (const auto& v : line.values) expected.push_back(to_double(v));
  check_doubles(line, actual, expected);
}

void check_ints(const FixtureLine& line, const std::vector<std::int64_t>& actual) {
  INFO("fixture line " << line.line_number << ": " << line.text);
  REQUIRE(actual.size() == line.values.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const std::int64_t expected = to_int64(line.values[i]);
    if (actual[i] != expected) {
      FAIL_CHECK("value " << i << ": numpy " << expected << ", ours " << actual[i]);
      return;
    }
  }
  SUCCEED();
}

std::vector<double> flat(const Matrix& m) { return {m.data(), m.data() + m.size()}; }

/// Replays one fixture line on `rs` and checks it against numpy's values.
void replay(RandomState& rs, const FixtureLine& line) {
  const auto& a = line.args;
  if (line.op == "seed") {
    rs.seed(static_cast<std::uint32_t>(std::strtoul(a.at(0).c_str(), nullptr, 10)));
  } else if (line.op == "uint32") {
    std::vector<std::int64_t> got;
    for (long i = 0; i < to_long(a.at(0)); ++i) got.push_back(rs.next_uint32());
    check_ints(line, got);
  } else if (line.op == "random_sample") {
    std::vector<double> got;
    for (long i = 0; i < to_long(a.at(0)); ++i) got.push_back(rs.random_sample());
    check_doubles(line, got);
  } else if (line.op == "standard_normal") {
    std::vector<double> got;
    for (long i = 0; i < to_long(a.at(0)); ++i) got.push_back(rs.standard_normal());
    check_doubles(line, got);
  } else if (line.op == "randn") {
    const Matrix m = rs.randn(to_long(a.at(0)), to_long(a.at(1)));
    check_doubles(line, flat(m));
  } else if (line.op == "rand") {
    const Matrix m = rs.rand(to_long(a.at(0)), to_long(a.at(1)));
    check_doubles(line, flat(m));
  } else if (line.op == "normal") {
    const Matrix m = rs.normal(to_long(a.at(0)), to_long(a.at(1)), to_double(a.at(2)), to_double(a.at(3)));
    check_doubles(line, flat(m));
  } else if (line.op == "randint") {
    const Matrix m = rs.randint(to_int64(a.at(0)), to_int64(a.at(1)), to_long(a.at(2)), to_long(a.at(3)));
    // The matrix holds doubles: compare with numpy's int64 converted the same way.
    std::vector<double> expected;
    for (const auto& v : line.values) expected.push_back(static_cast<double>(to_int64(v)));
    check_doubles(line, flat(m), expected);
  } else if (line.op == "randint_scalar") {
    std::vector<std::int64_t> got;
    for (long i = 0; i < to_long(a.at(2)); ++i) {
      got.push_back(rs.randint(to_int64(a.at(0)), to_int64(a.at(1))));
    }
    check_ints(line, got);
  } else {
    FAIL("fixture line " << line.line_number << ": unknown op '" << line.op << "'");
  }
}

}  // namespace

TEST_CASE("numpy_random: golden streams match numpy bit for bit", "[random]") {
  const std::vector<FixtureLine> lines = read_fixture();
  REQUIRE(lines.size() > 50);
  RandomState rs;
  int cases = 0;
  std::size_t values = 0;
  for (const FixtureLine& line : lines) {
    if (line.op == "case") {
      rs = RandomState(0xDEADBEEFU);  // every case seeds before drawing
      ++cases;
      continue;
    }
    values += line.values.size();
    replay(rs, line);
  }
  CHECK(cases >= 9);
  CHECK(values > 5000);
}

TEST_CASE("numpy_random: seed 000 reproduces the printed Q, K, V", "[random]") {
  // np.random.seed(42); q, k, v = three randn(4, 8), printed by numpy to 8 decimals.
  RandomState rs(42);
  const Matrix q = rs.randn(4, 8);
  const Matrix k = rs.randn(4, 8);
  const Matrix v = rs.randn(4, 8);
  const double printed = 5e-9;  // half a unit in the 8th decimal
  CHECK(q(0, 0) == Approx(0.49671415).margin(printed));
  CHECK(q(0, 6) == Approx(1.57921282).margin(printed));
  CHECK(q(3, 7) == Approx(1.85227818).margin(printed));
  CHECK(k(0, 0) == Approx(-0.01349722).margin(printed));
  CHECK(k(3, 7) == Approx(-1.19620662).margin(printed));
  CHECK(v(0, 0) == Approx(0.81252582).margin(printed));
  CHECK(v(0, 7) == Approx(1.53803657).margin(printed));
  // The source document's V printout stops after "0.09" (v[1][6]); v[1][5] is its last whole number.
  CHECK(v(1, 5) == Approx(-0.29900735).margin(printed));
  CHECK(v(1, 6) >= 0.09);
  CHECK(v(1, 6) < 0.10);
}

TEST_CASE("numpy_random: seed 002 reproduces the printed all_x and the weights", "[random]") {
  // np.random.seed(3); all_x = three normal(size=(4, 1)).
  RandomState rs(3);
  const double expected_x[3][4] = {{1.78862847, 0.43650985, 0.09649747, -1.8634927},
                                   {-0.2773882, -0.35475898, -0.08274148, -0.62700068},
                                   {-0.04381817, -0.47721803, -1.31386475, 0.88462238}};
  for (int n = 0; n < 3; ++n) {
    const Matrix x = rs.normal(4, 1);
    REQUIRE(x.rows() == 4);
    REQUIRE(x.cols() == 1);
    for (int d = 0; d < 4; ++d) {
      INFO("all_x[" << n << "][" << d << "]");
      CHECK(x(d, 0) == Approx(expected_x[n][d]).margin(5e-9));
    }
  }
  // np.random.seed(0); omega_q = normal(size=(4, 4)): numpy's well-known seed-0 stream.
  rs.seed(0);
  const Matrix omega_q = rs.normal(4, 4);
  CHECK(omega_q(0, 0) == 1.764052345967664);
  CHECK(omega_q(0, 1) == 0.4001572083672233);
}

TEST_CASE("numpy_random: reseeding restarts the stream and drops the cached Gaussian", "[random]") {
  RandomState rs(7);
  const double first = rs.standard_normal();  // leaves the pair's second value cached
  rs.seed(7);
  CHECK(rs.standard_normal() == first);

  RandomState fresh(7);
  RandomState reused(123);
  reused.randn(1, 3);
  reused.seed(7);
  CHECK(reused.rand(2, 2) == fresh.rand(2, 2));
}

TEST_CASE("numpy_random: matrix draws equal scalar draws in C order", "[random]") {
  RandomState a(2024);
  RandomState b(2024);
  const Matrix m = a.randint(-7, 1000, 3, 4);
  for (Eigen::Index r = 0; r < 3; ++r) {
    for (Eigen::Index c = 0; c < 4; ++c) {
      CHECK(m(r, c) == static_cast<double>(b.randint(-7, 1000)));
    }
  }
  const Matrix g = a.randn(2, 3);
  for (Eigen::Index i = 0; i < 6; ++i) CHECK(g(i / 3, i % 3) == b.standard_normal());
}

TEST_CASE("numpy_random: bad arguments throw InputError", "[random]") {
  RandomState rs(0);
  CHECK_THROWS_AS(rs.randint(5, 5), attn::InputError);
  CHECK_THROWS_AS(rs.randint(6, 5, 2, 2), attn::InputError);
  CHECK_THROWS_AS(rs.randn(-1, 2), attn::InputError);
  CHECK_THROWS_AS(rs.normal(2, 2, 0.0, -1.0), attn::InputError);
  // A single-value range draws nothing, exactly as numpy does.
  RandomState untouched(0);
  CHECK(rs.randint(9, 10) == 9);
  CHECK(rs.next_uint32() == untouched.next_uint32());
  // Empty shapes are fine.
  CHECK(rs.rand(0, 3).size() == 0);
}
