// Turns arbitrary bytes into an attn::Problem for the fuzz_run target (and for replaying its
// findings in tests). Bytes are read from the front; when they run out, every further read is 0,
// so any input decodes to some problem.
//
// Layout (see also tests/fuzz/make_corpus.py, which writes seed inputs in this format):
//   byte 0  flags A: bit0 projection mode (X, W_*) else direct (Q, K, V); bit1 columns layout;
//           bit2 causal; bit3 float32; bit4 a mask; bit5 mask is boolean (Keep) else additive;
//           bit6 W_O; bit7 X_kv (cross-attention)
//   byte 1  flags B: bit0..3 b_Q, b_K, b_V, b_O; bit4-5 scale kind (SqrtDk, None, Multiply,
//           DivideBy, or DivideBySqrt of |value| when the value is negative); bit6 softcap; bit7 free shapes (every
//           matrix's shape read from bytes)
//   byte 2  heads:    0..0x7f -> 1 + b % 4; 0x80.. -> a wild value (0, -1, INT_MIN, INT_MAX, b-0xc0)
//   byte 3  kv_heads: 0..0x7f -> a divisor of heads (0 = same); 0x80.. -> wild like heads
//   byte 4..8  L, S, d_model, d_k (per head), d_v (per head): each b % 9 (0 = empty)
//   byte 9  big: 0xf0.. puts one of {4096, 4097, 5000} into L, S, d_model, d_k or d_v
//   byte 10 perturb: 0 none; else shape quantity (b % 16) gets +1, -1 or becomes 0 (b / 16 % 3)
//   then: scale value, softcap (values); then each matrix in the order Q K V | X X_kv W_Q W_K
//   W_V, biases, W_O, b_O, mask: with free shapes first two bytes (rows, cols: b % 9), then its
//   values in row-major order of the user's layout. Mask entries are one byte each (boolean:
//   mostly 0/1; additive: -inf, 0 or minus a value).
//   A value is one byte v: v < 0xc0 -> (v - 96) / 8 (a small number on a 1/8 grid);
//   v - 0xc0 < kSpecials -> a special (0, -0, ±1e300, DBL_MAX, subnormals, ±inf, nan, float32
//   overflow, ...); otherwise the next 8 bytes as a raw double.
#pragma once

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "attention.h"

namespace attn::fuzzing {

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  size_t remaining() const { return size_ - pos_; }

  double value() {
    static const double kSpecials[] = {0.0,
                                       -0.0,
                                       1.0,
                                       -1.0,
                                       1e300,
                                       -1e300,
                                       1e154,
                                       -1e154,
                                       std::numeric_limits<double>::max(),
                                       -std::numeric_limits<double>::max(),
                                       std::numeric_limits<double>::min(),
                                       std::numeric_limits<double>::denorm_min(),
                                       -std::numeric_limits<double>::denorm_min(),
                                       2.2e-310,
                                       3.5e38,
                                       -3.5e38,
                                       1e20,
                                       1e-20,
                                       std::numeric_limits<double>::infinity(),
                                       -std::numeric_limits<double>::infinity(),
                                       std::numeric_limits<double>::quiet_NaN(),
                                       1e-45,
                                       65504.0,
                                       1e10,
                                       1e-300,
                                       2e19};
    constexpr int kSpecialCount = sizeof(kSpecials) / sizeof(kSpecials[0]);
    const uint8_t v = byte();
    if (v < 0xc0) return (static_cast<int>(v) - 96) / 8.0;
    const int index = v - 0xc0;
    if (index < kSpecialCount) return kSpecials[index];
    double raw = 0;
    if (remaining() >= 8) {
      std::memcpy(&raw, data_ + pos_, 8);
      pos_ += 8;
    }
    return raw;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

inline int wild_int(uint8_t b) {
  switch (b & 7) {
    case 0:
      return 0;
    case 1:
      return -1;
    case 2:
      return INT_MIN;
    case 3:
      return INT_MAX;
    case 4:
      return 4097;
    default:
      return static_cast<int>(b) - 0xc0;  // -64 .. 63
  }
}

inline Matrix read_matrix(ByteReader& in, Eigen::Index rows, Eigen::Index cols) {
  Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = in.value();
  return m;
}

inline Vector read_vector(ByteReader& in, Eigen::Index n) {
  Vector v(n);
  for (Eigen::Index i = 0; i < n; ++i) v[i] = in.value();
  return v;
}

inline Problem decode_problem(const uint8_t* data, size_t size) {
  ByteReader in(data, size);
  const uint8_t a = in.byte(), b = in.byte(), heads_byte = in.byte(), kv_byte = in.byte();
  const bool projection = a & 1, columns = a & 2, has_mask = a & 16, keep = a & 32, has_wo = a & 64, cross = a & 128;
  const bool free_shapes = b & 128;

  Problem p;
  Options& o = p.options;
  o.layout = columns ? Layout::Columns : Layout::Rows;
  o.causal = a & 4;
  o.precision = (a & 8) ? Precision::Float32 : Precision::Float64;
  o.mask_kind = keep ? MaskKind::Keep : MaskKind::Additive;
  o.heads = heads_byte < 0x80 ? 1 + heads_byte % 4 : wild_int(heads_byte);
  if (kv_byte < 0x80) {
    // 0 (same as heads) or a divisor of a valid heads value.
    const int h = o.heads >= 1 && o.heads <= 4 ? o.heads : 1;
    int divisors[4], n = 0;
    for (int d = 1; d <= h; ++d)
      if (h % d == 0) divisors[n++] = d;
    o.kv_heads = kv_byte % 5 == 0 ? 0 : divisors[kv_byte % n];
  } else {
    o.kv_heads = wild_int(kv_byte);
  }

  // Shape quantities (rows layout): L, S, d_model, d_k, d_v, then derived widths.
  Eigen::Index dim[5];
  for (auto& d : dim) d = in.byte() % 9;
  const uint8_t big = in.byte();
  if (big >= 0xf0) {
    static const Eigen::Index kBig[] = {4096, 4097, 5000};
    dim[big % 5] = kBig[(big >> 3) % 3];
  }
  const uint8_t perturb = in.byte();
  const int h = o.heads >= 1 && o.heads <= 8 ? o.heads : 1;
  const int kv = o.kv_heads == 0 ? h : (o.kv_heads >= 1 && o.kv_heads <= 8 ? o.kv_heads : 1);
  const Eigen::Index L = dim[0], S = dim[1], D = dim[2], dk = dim[3], dv = dim[4];
  // 0 Q/X rows, 1 K/X_kv rows, 2 V rows, 3 X cols, 4 X_kv cols, 5 W_Q rows, 6 W_K rows,
  // 7 W_V rows, 8 Q width, 9 K width, 10 V width, 11 W_O rows, 12 W_O cols, 13 mask rows,
  // 14 mask cols, 15 bias lengths.
  Eigen::Index q[16] = {L, S, S, D, D, D, D, D, h * dk, kv * dk, kv * dv, h * dv, D == 0 ? 3 : D, L, S, -1};
  if (perturb != 0) {
    Eigen::Index& target = q[perturb % 16];
    const int how = perturb / 16 % 3;
    if (target < 0) target = 0;
    target = how == 0 ? target + 1 : how == 1 ? (target > 0 ? target - 1 : 0) : 0;
  }
  const int bias_delta = q[15] < 0 ? 0 : static_cast<int>(q[15]) + 1;  // perturbed bias length

  switch ((b >> 4) & 3) {
    case 0:
      o.scale.kind = Scale::Kind::SqrtDk;
      break;
    case 1:
      o.scale.kind = Scale::Kind::None;
      break;
    case 2:
      o.scale.kind = Scale::Kind::Multiply;
      break;
    default:
      o.scale.kind = Scale::Kind::DivideBy;
      break;
  }
  o.scale.value = in.value();
  // Kind 3 with a negative value: divide by the root of its magnitude (the "1/sqrt(n)" scale),
  // so both divisor kinds are fuzzed without changing the byte layout.
  if (o.scale.kind == Scale::Kind::DivideBy && o.scale.value < 0) {
    o.scale.kind = Scale::Kind::DivideBySqrt;
    o.scale.value = -o.scale.value;
  }
  const double softcap = in.value();
  if (b & 64) o.softcap = softcap;

  // Shapes of each matrix, rows layout (rows, cols); transposed for the columns layout below.
  auto shape = [&](Eigen::Index r, Eigen::Index c) {
    if (free_shapes) {
      r = in.byte() % 9;
      c = in.byte() % 9;
    }
    return std::pair<Eigen::Index, Eigen::Index>(r, c);
  };
  auto matrix = [&](std::pair<Eigen::Index, Eigen::Index> rc) {
    // Tokens-as-columns input is the transpose of the rows-layout shape.
    return columns ? read_matrix(in, rc.second, rc.first) : read_matrix(in, rc.first, rc.second);
  };
  auto bias = [&](Eigen::Index n) {
    if (bias_delta > 0) n = (n + bias_delta) % 10;
    return read_vector(in, n);
  };

  if (!projection) {
    p.Q = matrix(shape(q[0], q[8]));
    p.K = matrix(shape(q[1], q[9]));
    p.V = matrix(shape(q[2], q[10]));
    if (b & 1) p.b_Q = bias(q[8]);  // not allowed in direct mode: an error to report
  } else {
    p.X = matrix(shape(q[0], q[3]));
    if (cross) p.X_kv = matrix(shape(q[1], q[4]));
    p.W_Q = matrix(shape(q[5], q[8]));
    p.W_K = matrix(shape(q[6], q[9]));
    p.W_V = matrix(shape(q[7], q[10]));
    if (b & 1) p.b_Q = bias(q[8]);
    if (b & 2) p.b_K = bias(q[9]);
    if (b & 4) p.b_V = bias(q[10]);
  }
  if (has_wo) p.W_O = matrix(shape(q[11], q[12]));
  if (b & 8) p.b_O = bias(q[12]);
  if (has_mask) {
    auto rc = shape(q[13], q[14]);
    // A 4096 x 4096 mask would cost the fuzzer more than the core: such problems are refused
    // by the trace limit anyway, so the mask shrinks to 1 x 1 (a mask-shape error).
    if (rc.first * rc.second > 65536) rc = {1, 1};
    Matrix m = columns ? Matrix(rc.second, rc.first) : Matrix(rc.first, rc.second);
    for (Eigen::Index i = 0; i < m.size(); ++i) {
      if (keep) {
        const uint8_t v = in.byte();
        m.data()[i] = v % 8 == 7 ? (v / 8 - 16) / 2.0 : (v & 1);  // mostly 0/1, sometimes not
      } else {
        const uint8_t v = in.byte();
        m.data()[i] = v % 4 == 0 ? -std::numeric_limits<double>::infinity() : (v % 4 == 1 ? 0.0 : -in.value());
      }
    }
    o.mask = m;
  }
  return p;
}

/// True if every input number of the problem is "tame" (finite, |v| <= 1e3, no subnormals) and
/// the options are too: then every step of the trace must be finite (except -inf in `masked`).
inline bool is_tame(const Problem& p) {
  auto tame = [](double v) { return std::isfinite(v) && std::abs(v) <= 1e3 && (v == 0 || std::abs(v) >= 1e-3); };
  auto all = [&](const auto& m) {
    if (!m) return true;
    for (Eigen::Index i = 0; i < m->size(); ++i)
      if (!tame(m->data()[i])) return false;
    return true;
  };
  if (!(all(p.Q) && all(p.K) && all(p.V) && all(p.X) && all(p.X_kv) && all(p.W_Q) && all(p.W_K) && all(p.W_V) &&
        all(p.W_O) && all(p.b_Q) && all(p.b_K) && all(p.b_V) && all(p.b_O))) {
    return false;
  }
  const Options& o = p.options;
  if (o.scale.kind == Scale::Kind::Multiply && !tame(o.scale.value)) return false;
  if ((o.scale.kind == Scale::Kind::DivideBy || o.scale.kind == Scale::Kind::DivideBySqrt) && !tame(o.scale.value)) {
    return false;
  }
  if (o.softcap != 0 && !tame(o.softcap)) return false;
  if (o.mask && o.mask_kind == MaskKind::Additive) {
    for (Eigen::Index i = 0; i < o.mask->size(); ++i) {
      const double v = o.mask->data()[i];
      if (v != -std::numeric_limits<double>::infinity() && !tame(v)) return false;
    }
  }
  return true;
}

}  // namespace attn::fuzzing
