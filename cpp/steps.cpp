// The step catalogue (see steps.h): one table of what each step is, and the formulas of every
// step for every option combination, in TeX (KaTeX subset) and in plain Unicode text.
#include "steps.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "normalized.h"

namespace attn {
namespace {

enum class Id {
  Positional,
  XPos,
  RopeAngles,
  Q,
  K,
  V,
  QNormed,
  KNormed,
  QRot,
  KRot,
  KCache,
  VCache,
  Scores,
  Scaled,
  Softcapped,
  Alibi,
  Biased,
  Mask,
  Masked,
  Weights1,
  Weights2,
  Weights,
  PhiQ,
  PhiK,
  LinearScores,
  Normalizer,
  // Multi-head latent attention (W_DKV given).
  CKV,
  KR,
  CQ,
  KC,
  QC,
  QR,
  ScoresC,
  ScoresR,
  QAbsorbed,
  ScoresCAbsorbed,
  OLatent,
  HeadOutput,
  HeadNormed,
  Gate,
  GatedOutput,
  Concat,
  Output,
  OutputAbsorbed,
  CacheSizes,
  // The backward pass (gradients.cpp): the gradient of a loss with respect to each step.
  DO,
  DGatedOutput,
  DGate,
  DHeadNormed,
  DHeadOutput,
  DA,
  DWeights1,
  DWeights2,
  DS,
  DSKept,
  DSUncapped,
  DScores,
  DQRot,
  DKRot,
  DKCache,
  DVCache,
  DQNormed,
  DKNormed,
  DQ,
  DK,
  DV,
  DPastK,
  DPastV,
  DWO,
  DbO,
  DWQ,
  DbQ,
  DWK,
  DbK,
  DWV,
  DbV,
  DGQ,
  DGK,
  DWG,
  DbG,
  DX,
  DXkv,
  DP,
  DLinearScores,
  DPhiQ,
  DPhiK,
  // Multi-head latent attention's backward pass (gradients.cpp, latent_back).
  DQC,
  DKC,
  DQR,
  DKR,
  DCKV,
  DPastCKV,
  DPastKR,
  DWUK,
  DWUV,
  DWDKV,
  DWKR,
  DWUQ,
  DWQR,
  DCQ,
  DWDQ
};

/// What a step is, whatever the options: its caption, its name (without a head superscript),
/// its kind of numbers and its axes in the rows layout.
struct Entry {
  Id key;
  const char* id;
  const char* tex;
  const char* text;
  ValueKind kind;
  Axis rows, cols;
};

constexpr Entry kCatalogue[] = {
    {Id::Positional, "positional", "PE", "PE", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::XPos, "X_pos", "X'", "X′", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::RopeAngles, "rope_angles", "\\Theta", "Θ", ValueKind::Signed, Axis::Positions, Axis::Features},
    {Id::Q, "Q", "Q", "Q", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::K, "K", "K", "K", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::V, "V", "V", "V", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::QNormed, "Q_normed", "\\hat Q", "Q̂", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::KNormed, "K_normed", "\\hat K", "K̂", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::QRot, "Q_rot", "Q_{\\text{rot}}", "Q_rot", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::KRot, "K_rot", "K_{\\text{rot}}", "K_rot", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::KCache, "K_cache", "K_{\\text{cache}}", "K_cache", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::VCache, "V_cache", "V_{\\text{cache}}", "V_cache", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::Scores, "scores", "S", "S", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::Scaled, "scaled", "\\tilde S", "S̃", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::Softcapped, "softcapped", "\\hat S", "Ŝ", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::Alibi, "alibi", "B", "B", ValueKind::AdditiveBias, Axis::Queries, Axis::Keys},
    {Id::Biased, "biased", "\\check S", "Š", ValueKind::Signed, Axis::Queries, Axis::Keys},
    // A keep-mask of 1 and 0, or an additive bias when the user's mask is additive (describe()).
    {Id::Mask, "mask", "M", "M", ValueKind::KeepMask, Axis::Queries, Axis::Keys},
    {Id::Masked, "masked", "\\bar S", "S̄", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::Weights1, "weights_1", "A_1", "A₁", ValueKind::Probability, Axis::Queries, Axis::Keys},
    {Id::Weights2, "weights_2", "A_2", "A₂", ValueKind::Probability, Axis::Queries, Axis::Keys},
    // Signed for differential attention (A₁ − λA₂), whose weights may be negative (describe()).
    {Id::Weights, "weights", "A", "A", ValueKind::Probability, Axis::Queries, Axis::Keys},
    // Linear attention (options.attention = "linear").
    {Id::PhiQ, "phi_Q", "\\phi(Q)", "φ(Q)", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::PhiK, "phi_K", "\\phi(K)", "φ(K)", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::LinearScores, "linear_scores", "\\Lambda", "Λ", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::Normalizer, "normalizer", "D", "D", ValueKind::Signed, Axis::Queries, Axis::Features},
    // Multi-head latent attention (DeepSeek-V2): c_KV, k_R and c_Q are shared by every head.
    {Id::CKV, "c_KV", "c_{KV}", "c_KV", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::KR, "k_R", "k_{R}", "k_R", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::CQ, "c_Q", "c_{Q}", "c_Q", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::KC, "K_C", "K_{C}", "K_C", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::QC, "Q_C", "Q_{C}", "Q_C", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::QR, "q_R", "q_{R}", "q_R", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::ScoresC, "scores_C", "S_{C}", "S_C", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::ScoresR, "scores_R", "S_{R}", "S_R", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::QAbsorbed, "Q_absorbed", "\\hat Q_{C}", "Q̂_C", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::ScoresCAbsorbed, "scores_C_absorbed", "\\hat S_{C}", "Ŝ_C", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::OLatent, "O_latent", "\\hat O", "Ô", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::HeadOutput, "head_output", "\\text{head}", "head", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::HeadNormed, "head_normed", "\\widehat{\\text{head}}", "head̂", ValueKind::Signed, Axis::Queries,
     Axis::Features},
    {Id::Gate, "gate", "G", "G", ValueKind::Probability, Axis::Queries, Axis::Features},
    {Id::GatedOutput, "gated_output", "\\tilde{\\text{head}}", "head̃", ValueKind::Signed, Axis::Queries,
     Axis::Features},
    {Id::Concat, "concat", "H", "H", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::Output, "output", "O", "O", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::OutputAbsorbed, "output_absorbed", "\\hat O_{\\text{out}}", "Ô_out", ValueKind::Signed, Axis::Queries,
     Axis::Features},
    {Id::CacheSizes, "cache_sizes", "N_{\\text{cache}}", "N_cache", ValueKind::Signed, Axis::Features, Axis::Features},
    // Gradients: tex and text hold the name of what each is the gradient of (Notation::symbol
    // writes d before it). A bias's gradient is one row (one column in the columns layout).
    {Id::DO, "dO", "O", "O", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::DGatedOutput, "dgated_output", "\\tilde{\\text{head}}", "head̃", ValueKind::Signed, Axis::Queries,
     Axis::Features},
    {Id::DGate, "dgate", "G", "G", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::DHeadNormed, "dhead_normed", "\\widehat{\\text{head}}", "head̂", ValueKind::Signed, Axis::Queries,
     Axis::Features},
    {Id::DHeadOutput, "dhead_output", "\\text{head}", "head", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::DA, "dA", "A", "A", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::DWeights1, "dweights_1", "A_1", "A₁", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::DWeights2, "dweights_2", "A_2", "A₂", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::DS, "dS", "", "", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::DSKept, "dS_kept", "", "", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::DSUncapped, "dS_uncapped", "", "", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::DScores, "dscores", "", "", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::DQRot, "dQ_rot", "Q_{\\text{rot}}", "Q_rot", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::DKRot, "dK_rot", "K_{\\text{rot}}", "K_rot", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DKCache, "dK_cache", "K_{\\text{cache}}", "K_cache", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DVCache, "dV_cache", "V_{\\text{cache}}", "V_cache", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DQNormed, "dQ_normed", "\\hat Q", "Q̂", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::DKNormed, "dK_normed", "\\hat K", "K̂", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DQ, "dQ", "Q", "Q", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::DK, "dK", "K", "K", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DV, "dV", "V", "V", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DPastK, "dpast_K", "K_{\\text{past}}", "K_past", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DPastV, "dpast_V", "V_{\\text{past}}", "V_past", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DWO, "dW_O", "W_{O}", "W_O", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DbO, "db_O", "b_{O}", "b_O", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DWQ, "dW_Q", "W_{Q}", "W_Q", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DbQ, "db_Q", "b_{Q}", "b_Q", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DWK, "dW_K", "W_{K}", "W_K", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DbK, "db_K", "b_{K}", "b_K", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DWV, "dW_V", "W_{V}", "W_V", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DbV, "db_V", "b_{V}", "b_V", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DGQ, "dg_q", "g_{q}", "g_q", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DGK, "dg_k", "g_{k}", "g_k", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DWG, "dW_G", "W_{G}", "W_G", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DbG, "db_G", "b_{G}", "b_G", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DX, "dX", "X", "X", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::DXkv, "dX_kv", "X_{\\text{kv}}", "X_kv", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DP, "dP", "P", "P", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::DLinearScores, "dlinear_scores", "\\Lambda", "Λ", ValueKind::Signed, Axis::Queries, Axis::Keys},
    {Id::DPhiQ, "dphi_Q", "\\phi(Q)", "φ(Q)", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::DPhiK, "dphi_K", "\\phi(K)", "φ(K)", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DQC, "dQ_C", "Q_{C}", "Q_C", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::DKC, "dK_C", "K_{C}", "K_C", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DQR, "dq_R", "q_{R}", "q_R", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::DKR, "dk_R", "k_{R}", "k_R", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DCKV, "dc_KV", "c_{KV}", "c_KV", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DPastCKV, "dpast_c_KV", "c_{KV,\\text{past}}", "c_KV,past", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DPastKR, "dpast_k_R", "k_{R,\\text{past}}", "k_R,past", ValueKind::Signed, Axis::Keys, Axis::Features},
    {Id::DWUK, "dW_UK", "W_{UK}", "W_UK", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DWUV, "dW_UV", "W_{UV}", "W_UV", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DWDKV, "dW_DKV", "W_{DKV}", "W_DKV", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DWKR, "dW_KR", "W_{KR}", "W_KR", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DWUQ, "dW_UQ", "W_{UQ}", "W_UQ", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DWQR, "dW_QR", "W_{QR}", "W_QR", ValueKind::Signed, Axis::Features, Axis::Features},
    {Id::DCQ, "dc_Q", "c_{Q}", "c_Q", ValueKind::Signed, Axis::Queries, Axis::Features},
    {Id::DWDQ, "dW_DQ", "W_{DQ}", "W_DQ", ValueKind::Signed, Axis::Features, Axis::Features},
};

}  // namespace

std::string js_number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  if (x == 0) return "0";
  // The fewest significant digits that read back as x: "%.*e" rounds correctly, so the first
  // precision that round-trips gives the digits JavaScript chooses.
  char buf[32];
  for (int precision = 0; precision < 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  // buf is [-]d[.ddd]e±xx: collect the digits and the decimal exponent.
  const char* p = buf;
  std::string sign;
  if (*p == '-') sign = "-", ++p;
  std::string digits;
  for (; *p != 'e'; ++p) {
    if (*p != '.') digits += *p;
  }
  const int exponent = std::atoi(p + 1);
  const int k = static_cast<int>(digits.size()), point = exponent + 1;  // ECMA-262's k and n
  if (k <= point && point <= 21) return sign + digits + std::string(static_cast<size_t>(point - k), '0');
  if (0 < point && point <= 21)
    return sign + digits.substr(0, static_cast<size_t>(point)) + "." + digits.substr(static_cast<size_t>(point));
  if (-6 < point && point <= 0) return sign + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  const std::string mantissa = k == 1 ? digits : digits.substr(0, 1) + "." + digits.substr(1);
  return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + std::to_string(std::abs(exponent));
}

namespace {

const Entry& entry(const std::string& id) {
  for (const Entry& e : kCatalogue) {
    if (id == e.id) return e;
  }
  throw std::logic_error("the step catalogue has no step '" + id + "'");
}

/// Joins pieces with one allocation (the formulas are built for every step of every trace).
std::string cat(std::initializer_list<std::string_view> pieces) {
  size_t size = 0;
  for (std::string_view piece : pieces) size += piece.size();
  std::string out;
  out.reserve(size);
  for (std::string_view piece : pieces) out += piece;
  return out;
}

/// Symbols and formulas in one notation: TeX or plain Unicode text.
class Notation {
 public:
  Notation(const Normalized& n, bool tex) : n_(n), tex_(tex), columns_(n.columns) {}

  /// The name of a step of `head` (-1: not per head), e.g. \tilde S^{(2)} or S̃⁽²⁾.
  std::string symbol(const Entry& e, int head) const {
    if (e.key >= Id::DO) return cat({"d", gradient_of(e, head)});
    if (e.key == Id::Positional && n_.options.positional == Positional::Learned) return "P";
    if (e.key == Id::HeadOutput || e.key == Id::HeadNormed || e.key == Id::GatedOutput) {
      return sub(pick(e.tex, e.text), std::to_string(head + 1), false);
    }
    return cat({pick(e.tex, e.text), head >= 0 ? sup(head) : std::string()});
  }

  /// The formula of `s` (described by `e`), its inputs being steps of `earlier`.
  std::string formula(const Step& s, const Entry& e, const std::vector<Step>& earlier) const {
    const std::string own = symbol(e, s.head);
    auto in = [&](size_t k) -> const Step& { return earlier[static_cast<size_t>(s.inputs[k])]; };
    auto in_symbol = [&](size_t k) { return symbol(entry(in(k).id), in(k).head); };
    const char* dot = pick("\\,", "·");

    switch (e.key) {
      case Id::Positional:
        if (n_.options.positional == Positional::Learned)
          return cat({own, pick(" \\;\\text{(@{formula.given})}", " (@{formula.given})")});
        return sinusoids(own);
      case Id::XPos:
        return cat({own, " = X + ", in_symbol(0)});
      case Id::RopeAngles:
        return rope_angles(own);
      case Id::Q:
      case Id::K:
      case Id::V:
        if (n_.latent) return latent(s, e.key, own, in_symbol);
        return projection(s, e.key, own, s.inputs.empty() ? std::string() : in_symbol(0));
      case Id::QRot:
      case Id::KRot:
        return cat({own, pick(" = \\operatorname{RoPE}(", " = RoPE("), in_symbol(0), ")", rope()});
      case Id::KCache:
      case Id::VCache: {
        const std::string past = cat({sub(s.id.substr(0, 1), pick("\\text{past}", "past")), sup(s.head)});
        if (!tex_) return cat({own, " = [", past, columns_ ? " | " : " ; ", in_symbol(0), "]"});
        return columns_ ? cat({own, " = \\left[\\, ", past, " \\mid ", in_symbol(0), " \\,\\right]"})
                        : cat({own, " = \\begin{bmatrix} ", past, " \\\\ ", in_symbol(0), " \\end{bmatrix}"});
      }
      case Id::Scores: {
        if (n_.latent && n_.d_r > 0) return cat({own, " = ", in_symbol(0), " + ", in_symbol(1)});
        const std::string q = in_symbol(0);
        const Step& k = in(1);
        const std::string k_name = pick(entry(k.id).tex, entry(k.id).text);
        const std::string kt = n_.heads == 1 ? cat({k_name, pick("^\\top", "ᵀ")})
                               : tex_        ? cat({k_name, "^{(", std::to_string(s.head + 1), ")\\top}"})
                                             : cat({k_name, sup(s.head), "ᵀ"});
        return columns_ ? cat({own, " = ", kt, pick(" ", "·"), q}) : cat({own, " = ", q, pick("", "·"), kt});
      }
      case Id::Scaled:
        return cat({own, " = ", scaled(in_symbol(0))});
      case Id::Softcapped: {
        const std::string c = js_number(n_.options.softcap);
        return cat(
            {own, pick(" = c\\,\\tanh(", " = c·tanh("), in_symbol(0), pick(" / c),\\quad c = ", " / c), c = "), c});
      }
      case Id::Alibi: {
        const std::string m = js_number(n_.alibi_slopes[static_cast<size_t>(s.head)]);
        return cat({own, pick("_{ij} = -m\\,|", "_ij = −m·|"), query(), pick(" - ", " − "), key(),
                    pick("|,\\quad m = ", "|, m = "), m});
      }
      case Id::Biased:
        return cat({own, " = ", in_symbol(0), " + ", in_symbol(1)});
      case Id::Mask:
        return mask(own);
      case Id::Masked:
        return masked(own, in_symbol(0), in_symbol(1));
      case Id::QNormed:
      case Id::KNormed:
        return qk_norm(own, in_symbol(0), e.key == Id::QNormed ? "q" : "k");
      case Id::Weights1:
      case Id::Weights2:
        return half_softmax(own, s, e.key == Id::Weights1 ? 1 : 2, in_symbol(0), in_symbol(1));
      case Id::HeadNormed: {
        const std::string x = in_symbol(0), li = js_number(n_.options.differential.lambda_init);
        if (tex_) {
          return cat({own, " = \\frac{", x, "}{\\sqrt{\\operatorname{mean}(", x,
                      "^2) + 10^{-5}}}\\,(1 - \\lambda_{\\text{init}}),\\quad \\lambda_{\\text{init}} = ", li,
                      " \\;\\text{(@{formula.each_row})}"});
        }
        return cat(
            {own, " = ", x, " / √(mean(", x, "²) + 1e-5) · (1 − λ_init), λ_init = ", li, " (@{formula.each_row})"});
      }
      case Id::Gate: {
        const std::string W =
            n_.gate_headwise ? columns_of(given_name("W_G"), s.head + 1, s.head + 1)
                             : columns_of(given_name("W_G"), s.feature_first + 1, s.feature_first + s.feature_count);
        const std::string b = n_.b_G
                                  ? cat({" + ", n_.gate_headwise ? columns_of(given_name("b_G"), s.head + 1, s.head + 1)
                                                                 : columns_of(given_name("b_G"), s.feature_first + 1,
                                                                              s.feature_first + s.feature_count)})
                                  : "";
        const std::string x = s.inputs.empty() ? "X" : in_symbol(0);
        return cat({own, pick(" = \\sigma(", " = σ("), x, pick("\\,", "·"), W, b, ")",
                    n_.gate_headwise
                        ? pick(" \\;\\text{(@{formula.one_gate_per_head})}", " (@{formula.one_gate_per_head})")
                        : pick(" \\;\\text{(@{formula.one_gate_per_feature})}", " (@{formula.one_gate_per_feature})")});
      }
      case Id::GatedOutput:
        return cat({own, " = ", in_symbol(0), pick(" \\circ ", " ∘ "), in_symbol(1)});
      case Id::Weights:
        if (!n_.lambdas.empty()) {
          const std::string l = js_number(n_.lambdas[static_cast<size_t>(s.head)]);
          return cat({own, " = ", in_symbol(0), pick(" - \\lambda\\,", " − λ·"), in_symbol(1),
                      pick(",\\quad \\lambda = ", ", λ = "), l});
        }
        if (n_.sigmoid) {
          const std::string b = js_number(n_.sigmoid_bias);
          const bool default_bias = std::isnan(n_.options.sigmoid_bias);
          const std::string S = std::to_string(n_.S);
          return cat(
              {indexed(own), pick(" = \\sigma(", " = σ("), indexed(in_symbol(0)),
               pick(" + b),\\quad b = ", " + b), b = "), b,
               default_bias ? cat({pick(" = -\\ln ", " = −ln "), S}) : std::string(),
               n_.has_mask() ? pick(",\\; 0 \\text{ @{formula.where_hidden}}", ", 0 @{formula.where_hidden}") : "",
               pick(" \\;\\text{(@{formula.rows_need_not_sum_to_1})}", " (@{formula.rows_need_not_sum_to_1})")});
        }
        if (!n_.sink_logits.empty()) return sink_softmax(own, in_symbol(0), s.head);
        return cat({own, pick(" = \\operatorname{softmax}(", " = softmax("), in_symbol(0),
                    pick(") \\quad\\text{(", ") ("),
                    columns_ ? "@{formula.down_each_column}" : "@{formula.along_each_row}", pick(")}", ")")});
      case Id::PhiQ:
      case Id::PhiK:
        return cat({own, " = ", feature_map(in_symbol(0))});
      case Id::LinearScores:
        return linear_scores(own, in_symbol(0), in_symbol(1));
      case Id::Normalizer:
        return tex_ ? cat({own, "_i = \\textstyle\\sum_j ", in_symbol(0), "_{ij}"})
                    : cat({own, "_i = Σ_j ", in_symbol(0), "_ij"});
      case Id::CKV:
      case Id::KR:
      case Id::CQ:
      case Id::KC:
      case Id::QC:
      case Id::QR:
      case Id::ScoresC:
      case Id::ScoresR:
      case Id::QAbsorbed:
      case Id::ScoresCAbsorbed:
      case Id::OLatent:
      case Id::OutputAbsorbed:
      case Id::CacheSizes:
        return latent(s, e.key, own, in_symbol);
      case Id::HeadOutput:
        if (n_.linear())
          return cat({own, " = ", linear_output(in_symbol(0), in_symbol(1), s.inputs.size() > 2 ? in_symbol(2) : "")});
        return cat({own, " = ", weighted_sum(in_symbol(0), in_symbol(1))});
      case Id::Concat: {
        std::string list;
        const char* between = columns_ ? pick(" \\\\ ", " ; ") : pick(" \\mid ", " | ");
        for (size_t k = 0; k < s.inputs.size(); ++k) {
          if (k) list += between;
          list += in_symbol(k);
        }
        if (!tex_) return cat({own, " = [", list, "]"});
        return columns_ ? cat({own, " = \\begin{bmatrix} ", list, " \\end{bmatrix}"})
                        : cat({own, " = \\left[\\, ", list, " \\,\\right]"});
      }
      case Id::Output:
      default:  // the gradient steps are written by gradient() below (describe_gradient())
        break;
    }
    // The output: one head's weighted sum, the concatenation itself, or its projection by W_O.
    if (!n_.W_O) {
      if (n_.linear() && in(0).id == "linear_scores") {
        return cat({own, " = ", linear_output(in_symbol(0), in_symbol(1), s.inputs.size() > 2 ? in_symbol(2) : "")});
      }
      if (s.inputs.size() == 2) return cat({own, " = ", weighted_sum(in_symbol(0), in_symbol(1))});
      return cat({own, " = ", tex_ ? in(0).tex : in(0).text});
    }
    const std::string W = columns_ ? sub(pick("\\Omega", "Ω"), "O") : sub("W", "O");
    const std::string b = n_.b_O ? cat({" + ", columns_ ? sub(pick("\\beta", "β"), "O") : sub("b", "O")}) : "";
    return columns_ ? cat({own, " = ", W, dot, in_symbol(0), b}) : cat({own, " = ", in_symbol(0), dot, W, b});
  }

  /// The formula of gradient step `s` (described by `e`): the chain rule, one forward step back.
  std::string gradient_formula(const Step& s, const Entry& e, const std::vector<Step>& earlier) const {
    return gradient(s, e, symbol(e, s.head), earlier);
  }

  /// A problem input's name: X, X_{kv}, W_{Q}^{(2)} (Ω and β in the columns layout), K_{past}.
  std::string given_symbol(const std::string& name, int head) const {
    if (name == "X_kv") return sub("X", "kv");
    if (name == "past_K" || name == "past_V") return sub(name.substr(5), pick("\\text{past}", "past"));
    if (name == "past_c_KV") return tex_ ? "c_{KV,\\text{past}}" : "c_KV,past";
    if (name == "past_k_R") return tex_ ? "k_{R,\\text{past}}" : "k_R,past";
    if (name.size() < 3 || (name[0] != 'W' && name[0] != 'b')) return name;
    const char* letter =
        name[0] == 'W' ? (columns_ ? pick("\\Omega", "Ω") : "W") : (columns_ ? pick("\\beta", "β") : "b");
    return cat({sub(letter, name.substr(2)), head >= 0 ? sup(head) : std::string()});
  }

 private:
  /// The name of what a gradient step is the gradient of: the softmax's input and the steps
  /// before it by the options, the Ω and β of the columns layout, else the entry's own name.
  std::string gradient_of(const Entry& e, int head) const {
    const Options& o = n_.options;
    const char* before_mask = !n_.alibi_slopes.empty() ? "biased" : o.softcap > 0 ? "softcapped" : "scaled";
    switch (e.key) {
      case Id::DS:
        return symbol(entry(n_.has_mask() ? "masked" : before_mask), head);
      case Id::DSKept:
        return symbol(entry(before_mask), head);
      case Id::DSUncapped:
        return symbol(entry("scaled"), head);
      case Id::DScores:
        return symbol(entry("scores"), head);
      case Id::DHeadOutput:
      case Id::DHeadNormed:
      case Id::DGatedOutput:
        return sub(pick(e.tex, e.text), std::to_string(head + 1), false);
      default:
        break;
    }
    const std::string_view id = e.id;
    if (columns_ && (id.substr(0, 3) == "dW_" || id.substr(0, 3) == "db_")) {
      return sub(id[1] == 'W' ? pick("\\Omega", "Ω") : pick("\\beta", "β"), id.substr(3));
    }
    return cat({pick(e.tex, e.text), head >= 0 ? sup(head) : std::string()});
  }

  /// `m` transposed: m^\top (inside a head's superscript in TeX: K^{(2)\top}), or mᵀ.
  std::string transposed(const std::string& m) const {
    if (!tex_) return cat({m, "ᵀ"});
    if (m.size() > 2 && m.compare(m.size() - 2, 2, ")}") == 0 && m.find("^{(") != std::string::npos) {
      return cat({std::string_view(m).substr(0, m.size() - 1), "\\top}"});
    }
    return cat({m, "^\\top"});
  }

  /// The product a·b of rows-layout matrices as the problem's layout writes it: every matrix of
  /// the columns layout is the transpose, so the factors swap (transposes stay where they are).
  std::string times(const std::string& a, const std::string& b) const {
    return columns_ ? cat({b, pick("\\,", "·"), a}) : cat({a, pick("\\,", "·"), b});
  }

  /// The matrix `name` of the problem as this layout writes it (W_Q is Ω_Q in the columns layout).
  std::string given_name(std::string_view name) const {
    if (name.size() == 3 && name[1] == '_' && (name[0] == 'W' || name[0] == 'b')) {
      if (columns_) return sub(name[0] == 'W' ? pick("\\Omega", "Ω") : pick("\\beta", "β"), name.substr(2));
      return sub(name.substr(0, 1), name.substr(2));
    }
    if (name == "X_kv") return sub("X", pick("\\text{kv}", "kv"));
    return std::string(name);
  }

  /// `m` ready for a slice's subscript in TeX: in parentheses when it has a sub- or superscript.
  static std::string sliceable(const std::string& m) {
    if (m.front() == '(' || m.find_first_of("_^") == std::string::npos) return m;
    return cat({"(", m, ")"});
  }

  /// A column slice [:, first..last] of the rows layout (a row slice [first..last, :] in the
  /// columns layout) of `m`, counted from 1.
  std::string columns_of(const std::string& m, Eigen::Index first, Eigen::Index last) const {
    const std::string range = cat({std::to_string(first), "..", std::to_string(last)});
    if (tex_)
      return columns_ ? cat({sliceable(m), "_{[", range, ",\\,:]}"}) : cat({sliceable(m), "_{[:,\\,", range, "]}"});
    return columns_ ? cat({m, "[", range, ", :]"}) : cat({m, "[:, ", range, "]"});
  }
  /// A row slice [first..last, :] of the rows layout (columns in the columns layout).
  std::string rows_of(const std::string& m, Eigen::Index first, Eigen::Index last) const {
    const std::string range = cat({std::to_string(first), "..", std::to_string(last)});
    if (tex_)
      return columns_ ? cat({sliceable(m), "_{[:,\\,", range, "]}"}) : cat({sliceable(m), "_{[", range, ",\\,:]}"});
    return columns_ ? cat({m, "[:, ", range, "]"}) : cat({m, "[", range, ", :]"});
  }

  /// The sum over tokens (rows; columns in the columns layout) of `m`: a bias's gradient.
  std::string token_sum(const std::string& m, const char* tokens) const {
    return tex_ ? cat({"\\textstyle\\sum_{\\text{@{formula.", tokens, "}}} ", m})
                : cat({"Σ @{formula.over_", tokens, "_of} ", m});
  }

  /// The formula of gradient step `s` (the chain rule, one forward step back).
  std::string gradient(const Step& s, const Entry& e, const std::string& own, const std::vector<Step>& earlier) const {
    auto in = [&](size_t k) -> const Step& { return earlier[static_cast<size_t>(s.inputs[k])]; };
    auto in_symbol = [&](size_t k) { return symbol(entry(in(k).id), in(k).head); };
    const char* given_text = pick(" \\;\\text{(@{formula.given})}", " (@{formula.given})");
    if (n_.latent && (e.key >= Id::DQC || e.key == Id::DWQ || e.key == Id::DX))
      return latent_gradient(s, e.key, own, earlier);
    switch (e.key) {
      case Id::DO:
        if (n_.dO) return cat({own, given_text, pick(",\\quad L = \\textstyle\\sum O \\circ dO", ", L = Σ O ∘ dO")});
        return cat(
            {own, pick(" = \\mathbf{1},\\quad L = \\textstyle\\sum O", " = 1 (@{formula.every_entry}), L = Σ O")});
      case Id::DGatedOutput:
        return cat(
            {own, " = ",
             columns_of(n_.W_O ? cat({"(", times(in_symbol(0), transposed(given_name("W_O"))), ")"}) : in_symbol(0),
                        s.feature_first + 1, s.feature_first + s.feature_count)});
      case Id::DGate:
        if (s.head < 0) return whole(s, own, earlier, 0);
        return n_.gate_headwise ? cat({own, " = ", pick("\\operatorname{rowsum}(", "rowsum("), in_symbol(0),
                                       pick(" \\circ ", " ∘ "), in_symbol(1), ")"})
                                : cat({own, " = ", in_symbol(0), pick(" \\circ ", " ∘ "), in_symbol(1)});
      case Id::DHeadNormed:
      case Id::DHeadOutput:
        if (in(0).id == "dgated_output") return cat({own, " = ", in_symbol(0), pick(" \\circ ", " ∘ "), in_symbol(1)});
        if (in(0).id == "dhead_normed") {
          const std::string y = in_symbol(0), x = in_symbol(1);
          return tex_ ? cat({own, " = \\frac{1 - \\lambda_{\\text{init}}}{r}\\big(", y,
                             " - \\hat x \\operatorname{mean}(", y, " \\circ \\hat x)\\big),\\quad \\hat x = ", x,
                             "/r,\\; r = \\sqrt{\\operatorname{mean}(", x,
                             "^2) + 10^{-5}} \\;\\text{(@{formula.each_row})}"})
                      : cat({own, " = (1 − λ_init)/r · (", y, " − x̂·mean(", y, " ∘ x̂)), x̂ = ", x, "/r, r = √(mean(", x,
                             "²) + 1e-5) (@{formula.each_row})"});
        }
        if (e.key == Id::DHeadNormed) {
          return cat(
              {own, " = ",
               columns_of(n_.W_O ? cat({"(", times(in_symbol(0), transposed(given_name("W_O"))), ")"}) : in_symbol(0),
                          s.feature_first + 1, s.feature_first + s.feature_count)});
        }
        {
          const std::string from =
              n_.W_O ? cat({"(", times(in_symbol(0), transposed(given_name("W_O"))), ")"}) : in_symbol(0);
          return cat({own, " = ", columns_of(from, s.feature_first + 1, s.feature_first + s.feature_count)});
        }
      case Id::DA:
        return cat({own, " = ", times(in_symbol(0), transposed(in_symbol(1)))});
      case Id::DVCache:
        return cat({own, " = ", times(transposed(in_symbol(0)), in_symbol(1))});
      case Id::DWeights1:
        return cat({own, " = ", in_symbol(0)});
      case Id::DWeights2:
        return cat({own, pick(" = -\\lambda\\,", " = −λ·"), in_symbol(0), pick(",\\quad \\lambda = ", ", λ = "),
                    js_number(n_.lambdas[static_cast<size_t>(s.head)])});
      case Id::DQNormed:
      case Id::DKNormed:
        if (in(0).id == "dQ_rot" || in(0).id == "dK_rot") {
          return cat({own, pick(" = \\operatorname{RoPE}^{-1}(", " = RoPE⁻¹("), in_symbol(0),
                      pick(") \\;\\text{(@{formula.each_pair_turned_back})}", ") (@{formula.each_pair_turned_back})")});
        }
        if (in(0).id == "dK_cache") return cat({own, " = ", rows_of(in_symbol(0), n_.past + 1, n_.S)});
        if (in(0).id == "dweights_1")
          return differential_dqk(own, e.key == Id::DQNormed, in_symbol(0), in_symbol(1), in_symbol(2));
        return e.key == Id::DQNormed ? cat({own, " = ", times(in_symbol(0), in_symbol(1))})
                                     : cat({own, " = ", times(transposed(in_symbol(0)), in_symbol(1))});
      case Id::DGQ:
      case Id::DGK: {
        const std::string sum =
            pick("\\textstyle\\sum_{\\text{@{formula.heads_rows}}} ", "Σ @{formula.over_heads_and_rows_of} ");
        return tex_ ? cat({own, " = ", sum, "d", e.key == Id::DGQ ? "\\hat Q" : "\\hat K", " \\circ \\hat x"})
                    : cat({own, " = ", sum, "d", e.key == Id::DGQ ? "Q̂" : "K̂",
                           " ∘ x̂ (x̂: @{formula.row_normalised_before_gain})"});
      }
      case Id::DWG: {
        const std::string x = s.inputs.size() == 3 ? in_symbol(0) : "X", dG = in_symbol(s.inputs.size() - 2),
                          G = in_symbol(s.inputs.size() - 1);
        return cat(
            {own, " = ", times(transposed(x), cat({"(", dG, pick(" \\circ G \\circ (1 - G)", " ∘ G ∘ (1 − G)"), ")"})),
             pick(" \\;\\text{(}G \\text{: @{formula.every_heads_gate})}", " (G: @{formula.every_heads_gate})")});
      }
      case Id::DbG:
        return cat(
            {own, " = ",
             token_sum(cat({"(", in_symbol(0), pick(" \\circ G \\circ (1 - G))", " ∘ G ∘ (1 − G))")}), "queries")});
      case Id::DS: {
        if (n_.sigmoid) {
          const std::string A = in_symbol(0), dA = in_symbol(1);
          return cat({own, " = ", dA, pick(" \\circ ", " ∘ "), A, pick(" \\circ (1 - ", " ∘ (1 − "), A,
                      pick(") \\;\\text{(@{formula.sigmoid_slope})}", ") (@{formula.sigmoid_slope})")});
        }
        const std::string A = in_symbol(0), dA = in_symbol(1);
        const char* sum = columns_ ? "colsum" : "rowsum";
        if (tex_) {
          return cat(
              {own, " = ", A, " \\circ \\big(", dA, " - \\operatorname{", sum, "}(", dA, " \\circ ", A, ")\\big)"});
        }
        return cat({own, " = ", A, " ∘ (", dA, " − ", sum, "(", dA, " ∘ ", A, "))"});
      }
      case Id::DSKept:
        return cat({own, " = ", in_symbol(0), pick(" \\text{ @{formula.where} } ", " @{formula.where} "), in_symbol(1),
                    pick(" \\text{ @{formula.keeps_the_key} } 0 \\text{ @{formula.where_it_hides_it}}",
                         " @{formula.keeps_the_key} 0 @{formula.where_it_hides_it}")});
      case Id::DSUncapped: {
        const std::string c = js_number(n_.options.softcap);
        return cat({own, " = ", in_symbol(0), pick(" \\circ \\big(1 - \\tanh^2(", " ∘ (1 − tanh²("), in_symbol(1),
                    pick(" / c)\\big),\\quad c = ", " / c)), c = "), c});
      }
      case Id::DScores:
        return cat({own, " = ", scaled(in_symbol(0))});
      case Id::DQRot:
        if (in(0).id == "dweights_1") return differential_dqk(own, true, in_symbol(0), in_symbol(1), in_symbol(2));
        return cat({own, " = ", times(in_symbol(0), in_symbol(1))});
      case Id::DKRot:
      case Id::DKCache:
        if (in(0).id == "dweights_1") return differential_dqk(own, false, in_symbol(0), in_symbol(1), in_symbol(2));
        if (in(0).id == "dscores") return cat({own, " = ", times(transposed(in_symbol(0)), in_symbol(1))});
        return cat({own, " = ", rows_of(in_symbol(0), n_.past + 1, n_.S)});
      case Id::DQ:
      case Id::DK:
      case Id::DV:
        if (s.head < 0) return whole(s, own, earlier, 0);
        if (in(0).id == "dscores") {
          return e.key == Id::DQ ? cat({own, " = ", times(in_symbol(0), in_symbol(1))})
                                 : cat({own, " = ", times(transposed(in_symbol(0)), in_symbol(1))});
        }
        if (in(0).id == "weights") return cat({own, " = ", times(transposed(in_symbol(0)), in_symbol(1))});
        if (in(0).id == "linear_scores") {
          if (s.inputs.size() < 3) return cat({own, " = ", times(transposed(in_symbol(0)), in_symbol(1))});
          return cat({own, " = ", times(transposed(in_symbol(0)), cat({"(", in_symbol(1), " / ", in_symbol(2), ")"})),
                      pick(" \\;\\text{(@{formula.each_row_of} } ", " (@{formula.each_row_of} "), in_symbol(1),
                      pick(" \\text{ @{formula.over_its} } ", " @{formula.over_its} "), in_symbol(2), pick(")", ")")});
        }
        if (in(0).id == "dphi_Q" || in(0).id == "dphi_K") {
          const std::string x = in(0).id == "dphi_Q" ? "Q" : "K";
          return cat({own, " = ", in_symbol(0), pick(" \\circ \\phi'(", " ∘ φ′("), x, sup(s.head), "), ", slope()});
        }
        if (in(0).id == "dweights_1")
          return differential_dqk(own, e.key == Id::DQ, in_symbol(0), in_symbol(1), in_symbol(2));
        if (in(0).id == "dQ_normed" || in(0).id == "dK_normed") {
          const QkNorm& q = n_.options.qk_norm;
          const std::string y = in_symbol(0), x = in_symbol(1), g = e.key == Id::DQ ? "g_q" : "g_k";
          const bool layer = q.type == QkNorm::Type::Layer;
          if (tex_) {
            return cat({own, " = \\frac{1}{\\sigma}\\big(u", layer ? " - \\operatorname{mean}(u)" : "",
                        " - \\hat x \\operatorname{mean}(u \\circ \\hat x)\\big),\\quad u = ", y, " \\circ ",
                        e.key == Id::DQ ? "g_{q}" : "g_{k}",
                        ",\\; \\hat x = ", layer ? "(x - \\operatorname{mean}(x))" : "x", "/\\sigma,\\; x = ", x,
                        " \\;\\text{(@{formula.qk_norm_turned_back})}"});
          }
          return cat({own, " = (u", layer ? " − mean(u)" : "", " − x̂·mean(u ∘ x̂)) / σ, u = ", y, " ∘ ", g,
                      ", x̂ = ", layer ? "(x − mean(x))" : "x", "/σ, x = ", x, " (@{formula.qk_norm_turned_back})"});
        }
        if (in(0).id == "dQ_rot" || in(0).id == "dK_rot") {
          return cat({own, pick(" = \\operatorname{RoPE}^{-1}(", " = RoPE⁻¹("), in_symbol(0),
                      pick(") \\;\\text{(@{formula.each_pair_turned_back})}", ") (@{formula.each_pair_turned_back})")});
        }
        return cat({own, " = ", rows_of(in_symbol(0), n_.past + 1, n_.S)});
      case Id::DPastK:
      case Id::DPastV:
        return whole(s, own, earlier, n_.past);
      case Id::DWO:
      case Id::DWQ:
      case Id::DWK:
      case Id::DWV: {
        const std::string d = in_symbol(s.inputs.size() - 1);
        const bool queries = e.key == Id::DWQ || !n_.cross;
        const std::string x =
            e.key == Id::DWO || s.inputs.size() == 2 ? in_symbol(0) : given_name(queries ? "X" : "X_kv");
        return cat({own, " = ", times(transposed(x), d)});
      }
      case Id::DbO:
      case Id::DbQ:
        return cat({own, " = ", token_sum(in_symbol(0), "queries")});
      case Id::DbK:
      case Id::DbV:
        return cat({own, " = ", token_sum(in_symbol(0), "keys")});
      case Id::DX:
      case Id::DXkv: {
        std::string sum;
        for (size_t k = 0; k < s.inputs.size(); ++k) {
          if (in(k).id == "dgate") {  // through the gate's sigmoid
            sum = cat({sum, " + ",
                       times(cat({"(", in_symbol(k), pick(" \\circ G \\circ (1 - G))", " ∘ G ∘ (1 − G))")}),
                             transposed(given_name("W_G")))});
            continue;
          }
          const std::string W = given_name(cat({"W_", std::string_view(in(k).id).substr(1, 1)}));
          sum = cat({sum, k ? " + " : "", times(in_symbol(k), transposed(W))});
        }
        return cat({own, " = ", sum});
      }
      case Id::DP:
        return cat(
            {own, " = ", in_symbol(0), pick(" \\;\\text{(@{formula.p_added_to_x})}", " (@{formula.p_added_to_x})")});
      case Id::DLinearScores: {
        const std::string dhead = in_symbol(0), V = in_symbol(1);
        if (s.inputs.size() < 4) return cat({own, " = ", times(dhead, transposed(V))});
        const std::string O = in_symbol(2), D = in_symbol(3);
        if (tex_) {
          return cat({own, "_{ij} = ", dhead, "_i \\cdot (", V, "_j - ", O, "_i) \\,/\\, ", D, "_i"});
        }
        return cat({own, "_ij = ", dhead, "_i · (", V, "_j − ", O, "_i) / ", D, "_i"});
      }
      case Id::DPhiQ:
      case Id::DPhiK: {
        const std::string d = n_.options.causal ? cat({"(", in_symbol(0), pick(" \\circ C)", " ∘ C)")}) : in_symbol(0);
        const std::string product = e.key == Id::DPhiQ ? times(d, in_symbol(1)) : times(transposed(d), in_symbol(1));
        if (!n_.options.causal) return cat({own, " = ", product});
        const double gamma = n_.decay();
        const std::string factor =
            gamma == 1 ? std::string("1")
                       : cat({pick("\\gamma^{i-j}", "γ^(i−j)"), pick(",\\; \\gamma = ", ", γ = "), js_number(gamma)});
        if (tex_)
          return cat({own, " = ", product, ",\\quad C_{ij} = ", factor,
                      " \\text{ @{formula.where} } j \\le i, \\text{ @{formula.else} } 0"});
        return cat({own, " = ", product, ", C_ij = ", factor, " @{formula.where} j ≤ i, @{formula.else} 0"});
      }
      default:
        return own;
    }
  }

  /// Multi-head latent attention's gradient steps (gradients.cpp, latent_back): the chain rule
  /// through c_KV = X·W_DKV, K_C = c_KV·W_UK, V = c_KV·W_UV, k_R = RoPE(X·W_KR), c_Q = X·W_DQ,
  /// Q_C = c_Q·W_UQ (or X·W_Q), q_R = RoPE(c_Q·W_QR or X·W_QR). Rows layout only.
  ATTN_NOINLINE std::string latent_gradient(const Step& s, Id key, const std::string& own,
                                            const std::vector<Step>& earlier) const {
    auto in = [&](size_t k) -> const Step& { return earlier[static_cast<size_t>(s.inputs[k])]; };
    auto name = [&](const Step& x) { return symbol(entry(x.id), x.head); };
    const char* dot = pick("\\,", "·");
    const std::string h = pick("^{(h)}", "⁽ʰ⁾");
    const auto W = [&](const char* w, bool per_head) { return cat({sub("W", w), per_head ? h : std::string()}); };
    const auto unrotate = [&](const std::string& x) {
      return cat({pick("\\operatorname{RoPE}^{-1}(", "RoPE⁻¹("), x, ")"});
    };
    const auto each_head = [&](const std::string& term) {
      return tex_ ? cat({"\\big[\\, ", term, " \\,\\big]_h \\;\\text{(@{formula.heads_side_by_side})}"})
                  : cat({"[", term, "]_h (@{formula.heads_side_by_side})"});
    };
    const auto sum_heads = [&](const std::string& term) {
      return n_.heads == 1 ? term : cat({pick("\\textstyle\\sum_h ", "Σ_h "), term});
    };
    const auto d_of = [&](const char* tex, const char* text) {
      return cat({"d", pick(tex, text), n_.heads == 1 ? std::string() : h});
    };
    const auto new_rows = [&](const std::string& x) { return n_.past > 0 ? rows_of(x, n_.past + 1, n_.S) : x; };
    const std::string dQC = d_of("Q_{C}", "Q_C"), dKC = d_of("K_{C}", "K_C"), dV = d_of("V", "V"),
                      dqR = d_of("q_{R}", "q_R");
    const char* reads_q = n_.qr_from_cq ? "c_{Q}" : "X";
    switch (key) {
      case Id::DQC:
      case Id::DQR:
        return cat({own, " = ", in_symbol_of(in(0)), dot, in_symbol_of(in(1))});
      case Id::DKC:
        return cat({own, " = ", transposed(in_symbol_of(in(0))), dot, in_symbol_of(in(1))});
      case Id::DKR:
        if (s.head >= 0) return cat({own, " = ", transposed(in_symbol_of(in(0))), dot, in_symbol_of(in(1))});
        return cat({own, " = ", sum_heads(d_of("k_{R}", "k_R")),
                    pick(" \\;\\text{(@{formula.one_rotary_key})}", " (@{formula.one_rotary_key})")});
      case Id::DCKV:
        return cat({own, " = ",
                    sum_heads(cat({"(", dKC, dot, transposed(W("UK", n_.heads > 1)), " + ", dV, dot,
                                   transposed(W("UV", n_.heads > 1)), ")"}))});
      case Id::DPastCKV:
      case Id::DPastKR:
        return cat({own, " = ", rows_of(name(in(0)), 1, n_.past)});
      case Id::DWUK:
        return cat({own, " = ", each_head(cat({transposed(pick("c_{KV}", "c_KV")), dot, dKC}))});
      case Id::DWUV:
        return cat({own, " = ", each_head(cat({transposed(pick("c_{KV}", "c_KV")), dot, dV}))});
      case Id::DWDKV:
        return cat({own, " = ", transposed("X"), dot, new_rows(name(in(0)))});
      case Id::DWKR:
        return cat({own, " = ", transposed("X"), dot, unrotate(new_rows(name(in(0))))});
      case Id::DWUQ:
        return cat({own, " = ", each_head(cat({transposed(pick("c_{Q}", "c_Q")), dot, dQC}))});
      case Id::DWQ:
        return cat({own, " = ", each_head(cat({transposed("X"), dot, dQC}))});
      case Id::DWQR:
        return cat(
            {own, " = ", each_head(cat({transposed(pick(reads_q, n_.qr_from_cq ? "c_Q" : "X")), dot, unrotate(dqR)}))});
      case Id::DCQ: {
        std::string term = cat({dQC, dot, transposed(W("UQ", n_.heads > 1))});
        if (n_.qr_from_cq) term = cat({"(", term, " + ", unrotate(dqR), dot, transposed(W("QR", n_.heads > 1)), ")"});
        return cat({own, " = ", sum_heads(term)});
      }
      case Id::DWDQ:
        return cat({own, " = ", transposed("X"), dot, name(in(0))});
      case Id::DX: {
        std::string out = cat({own, " = ", new_rows(pick("dc_{KV}", "dc_KV")), dot, transposed(W("DKV", false))});
        if (n_.d_r > 0)
          out = cat({out, " + ", unrotate(new_rows(pick("dk_{R}", "dk_R"))), dot, transposed(W("KR", false))});
        if (n_.W_DQ)
          out = cat({out, " + ", pick("dc_{Q}", "dc_Q"), dot, transposed(W("DQ", false))});
        else
          out = cat({out, " + ", sum_heads(cat({dQC, dot, transposed(W("Q", n_.heads > 1))}))});
        if (n_.d_r > 0 && !n_.qr_from_cq)
          out = cat({out, " + ", sum_heads(cat({unrotate(dqR), dot, transposed(W("QR", n_.heads > 1))}))});
        return out;
      }
      default:
        break;
    }
    return own;
  }

  std::string in_symbol_of(const Step& x) const { return symbol(entry(x.id), x.head); }

  /// Differential attention's dQ (or dK) of a head as the scores read it: each half's softmax
  /// turned back from dA₁ and dA₂, the halves side by side.
  std::string differential_dqk(const std::string& own, bool queries, const std::string& dA1, const std::string& dA2,
                               const std::string& other) const {
    const std::string dS = tex_ ? "dS_k = A_k \\circ \\big(dA_k - \\operatorname{rowsum}(dA_k \\circ A_k)\\big)\\cdot s"
                                : "dS_k = A_k ∘ (dA_k − rowsum(dA_k ∘ A_k))·s";
    const std::string half = queries ? cat({"dS_k", pick("\\,", "·"), other, "_k"})
                                     : cat({pick("dS_k^\\top", "dS_kᵀ"), pick("\\,", "·"), other, "_k"});
    return cat({own, pick("_k = ", "_k = "), half, pick(",\\quad ", ", "), dS,
                pick(",\\; k = 1, 2 \\text{ (@{formula.from} } ", ", k = 1, 2 (@{formula.from} "), dA1, ", ", dA2,
                pick("\\text{)}", ")")});
  }

  /// A whole gradient from its heads' (dQ, dK, dV, dpast_K, dpast_V): side by side, one block per
  /// head (dQ) or per key/value head, the block being the sum over the heads that read it (GQA);
  /// dpast_*: the first `past` rows (the cached ones) of each head's dK_cache / dV_cache.
  std::string whole(const Step& s, const std::string& own, const std::vector<Step>& earlier, Eigen::Index past) const {
    if (s.inputs.size() == 1) {
      const Step& only = earlier[static_cast<size_t>(s.inputs[0])];
      const std::string name = symbol(entry(only.id), only.head);
      if (past > 0) return cat({own, " = ", rows_of(name, 1, past)});
      return cat({own, pick(" \\;\\text{(@{formula.the_one_heads})}", " (@{formula.the_one_heads})")});
    }
    const bool per_query_head = s.id == "dQ";
    std::vector<std::string> blocks;
    int block = -1;
    for (int i : s.inputs) {
      const Step& h = earlier[static_cast<size_t>(i)];
      const std::string name = symbol(entry(h.id), h.head);
      const std::string term = past > 0 ? rows_of(name, 1, past) : name;
      const int which = per_query_head ? h.head : h.kv_group;
      if (which != block) {
        blocks.push_back(term);
        block = which;
      } else {
        blocks.back() = cat({blocks.back(), " + ", term});
      }
    }
    std::string list;
    const char* between = columns_ ? pick(" \\\\ ", " ; ") : pick(" \\mid ", " | ");
    for (size_t k = 0; k < blocks.size(); ++k) list = cat({list, k ? between : "", blocks[k]});
    if (!tex_) return cat({own, " = [", list, "]"});
    return columns_ ? cat({own, " = \\begin{bmatrix} ", list, " \\end{bmatrix}"})
                    : cat({own, " = \\left[\\, ", list, " \\,\\right]"});
  }

  /// The TeX or the text variant.
  const char* pick(const char* tex, const char* text) const { return tex_ ? tex : text; }

  /// base_{s} in TeX, base_s in text (or bases when `underscore` is false: "head1").
  std::string sub(std::string_view base, std::string_view s, bool underscore = true) const {
    if (tex_) return cat({base, "_{", s, "}"});
    return cat({base, underscore ? "_" : "", s});
  }

  /// The head superscript ^{(h)} / ⁽ʰ⁾ (counted from 1), only when there are several heads.
  std::string sup(int head) const {
    if (n_.heads == 1) return "";
    const std::string number = std::to_string(head + 1);
    if (tex_) return cat({"^{(", number, ")}"});
    static const char* const kDigits[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
    std::string out = "⁽";
    for (char d : number) out += kDigits[d - '0'];
    return out + "⁾";
  }

  /// The original Transformer's encoding at each token's position p, d = d_model.
  ATTN_NOINLINE std::string sinusoids(const std::string& own) const {
    const std::string d = std::to_string(n_.X.cols());
    if (tex_) {
      return cat({own, "_{p,\\,2i} = \\sin(p / 10000^{2i/d}),\\; ", own,
                  "_{p,\\,2i+1} = \\cos(p / 10000^{2i/d}),\\quad d = ", d});
    }
    return cat({own, "[p, 2i] = sin(p / 10000^(2i/d)), ", own, "[p, 2i+1] = cos(p / 10000^(2i/d)), d = ", d});
  }

  /// RoPE's angle of each position p (rows in the rows layout) and pair i.
  ATTN_NOINLINE std::string rope_angles(const std::string& own) const {
    const Rope& r = n_.options.rope;
    const std::string at = tex_ ? (columns_ ? "_{i,p}" : "_{p,i}") : (columns_ ? "[i, p]" : "[p, i]");
    if (r.cos) {
      return tex_ ? cat({own, at, " = \\operatorname{atan2}(\\sin", at, ", \\cos", at,
                         ") \\quad\\text{(@{formula.angles_of_tables})}"})
                  : cat({own, at, " = atan2(sin", at, ", cos", at, ") (@{formula.angles_of_tables})"});
    }
    const std::string base = js_number(r.base), dims = std::to_string(r.dims);
    return tex_ ? cat({own, at, " = p\\,\\theta_i,\\quad \\theta_i = ", base, "^{-2i/", dims, "}"})
                : cat({own, at, " = p·θ_i, θ_i = ", base, "^(−2i/", dims, ")"});
  }

  /// What RoPE turns: the angles (or the tables), the pairs, and the features when partial.
  ATTN_NOINLINE std::string rope() const {
    const Rope& r = n_.options.rope;
    const std::string dims = std::to_string(r.dims), half = std::to_string(r.dims / 2);
    std::string out;
    if (r.cos) {
      out = pick(",\\quad \\cos, \\sin \\text{ @{formula.from_the_tables}}", ", cos, sin @{formula.from_the_tables}");
    } else if (tex_) {
      out = cat({",\\quad \\theta_i = ", js_number(r.base), "^{-2i/", dims, "}"});
    } else {
      out = cat({", θ_i = ", js_number(r.base), "^(−2i/", dims, ")"});
    }
    const bool half_style = r.style == Rope::Style::Half;
    if (tex_) {
      out += half_style ? cat({",\\; \\text{@{formula.pairs} } (i,\\, i+", half, ")"})
                        : std::string(",\\; \\text{@{formula.pairs} } (2i,\\, 2i+1)");
    } else {
      out += half_style ? cat({", @{formula.pairs} (i, i+", half, ")"}) : std::string(", @{formula.pairs} (2i, 2i+1)");
    }
    const Eigen::Index width = n_.latent ? n_.d_r : n_.d_k;
    if (r.dims < width) {
      const std::string of = std::to_string(width);
      out += tex_ ? cat({",\\; \\text{@{formula.features} } 1..", dims, " \\text{ @{formula.of} } ", of})
                  : cat({", @{formula.features} 1..", dims, " @{formula.of} ", of});
    }
    return out;
  }

  /// Q, K or V: given directly (a slice of it with several heads), or projected from X (or from
  /// the step `from`, X with its positions).
  ATTN_NOINLINE std::string projection(const Step& s, Id key, const std::string& own, const std::string& from) const {
    const std::string& name = s.id;
    if (n_.direct) {
      if (n_.heads == 1) return cat({name, pick(" \\;\\text{(@{formula.given})}", " (@{formula.given})")});
      const std::string first = std::to_string(s.feature_first + 1),
                        last = std::to_string(s.feature_first + s.feature_count);
      if (tex_) {
        return columns_ ? cat({own, " = ", name, "_{[", first, "..", last, ",\\,:]}"})
                        : cat({own, " = ", name, "_{[:,\\,", first, "..", last, "]}"});
      }
      return columns_ ? cat({own, " = ", name, "[", first, "..", last, ", :]"})
                      : cat({own, " = ", name, "[:, ", first, "..", last, "]"});
    }
    const std::string input = !from.empty() ? from : key == Id::Q || !n_.cross ? "X" : sub("X", "kv");
    const std::string head = sup(s.head);
    const std::string W = cat({columns_ ? sub(pick("\\Omega", "Ω"), name) : sub("W", name), head});
    const bool has_bias = (key == Id::Q ? n_.b_Q : key == Id::K ? n_.b_K : n_.b_V).has_value();
    const std::string b =
        has_bias ? cat({" + ", columns_ ? sub(pick("\\beta", "β"), name) : sub("b", name), head}) : "";
    const char* dot = pick("\\,", "·");
    return columns_ ? cat({own, " = ", W, dot, input, b}) : cat({own, " = ", input, dot, W, b});
  }

  /// The right-hand side of the scaled scores, `S` being the scores' symbol.
  ATTN_NOINLINE std::string scaled(const std::string& S) const {
    const Scale& scale = n_.options.scale;
    const auto divided = [&](std::string_view by) {
      return tex_ ? cat({"\\frac{", S, "}{", by, "}"}) : cat({S, " / ", by});
    };
    switch (scale.kind) {
      case Scale::Kind::SqrtDk: {
        const bool halves = !n_.lambdas.empty();  // differential attention: d_k/2 features a score
        const std::string d_k = std::to_string(halves ? n_.d_k / 2 : n_.d_k);
        if (n_.latent && n_.d_r > 0) {
          const std::string sum = cat({std::to_string(n_.d_h), " + ", std::to_string(n_.d_r)});
          return cat({divided(pick("\\sqrt{d_h + d_r}", "√(d_h + d_r)")), " = ",
                      divided(tex_ ? cat({"\\sqrt{", sum, "}"}) : cat({"√(", sum, ")"}))});
        }
        return cat({divided(halves ? pick("\\sqrt{d_k/2}", "√(d_k/2)") : pick("\\sqrt{d_k}", "√d_k")), " = ",
                    divided(tex_ ? cat({"\\sqrt{", d_k, "}"}) : cat({"√", d_k}))});
      }
      case Scale::Kind::None:
        return cat({S, pick(" \\quad\\text{(@{formula.not_scaled})}", " (@{formula.not_scaled})")});
      case Scale::Kind::DivideBy:
        return divided(js_number(scale.value));
      case Scale::Kind::DivideBySqrt: {
        const std::string root = js_number(scale.value);
        return divided(tex_ ? cat({"\\sqrt{", root, "}"}) : cat({"√", root}));
      }
      case Scale::Kind::Multiply:
        return cat({js_number(scale.value), pick("\\,", "·"), S});
    }
    return S;
  }

  /// The index of a query and of a key in a scores-shaped step (i and j in the rows layout, j and
  /// i in the columns layout), or their positions when those are not the indices.
  std::string query() const { return position(columns_ ? "j" : "i", n_.query_pos); }
  std::string key() const { return position(columns_ ? "i" : "j", n_.key_pos); }
  std::string position(const char* index, const std::vector<double>& pos) const {
    for (size_t k = 0; k < pos.size(); ++k) {
      if (pos[k] != static_cast<double>(k)) return cat({pick("\\mathrm{pos}(", "pos("), index, ")"});
    }
    return index;
  }
  /// base_{ij} in TeX (ij in the step's own order), base_ij in text.
  std::string indexed(const std::string& base) const { return cat({base, pick("_{ij}", "_ij")}); }

  /// The mask step: which keys each query keeps, component by component.
  ATTN_NOINLINE std::string mask(const std::string& own) const {
    const Options& o = n_.options;
    const std::string q = query(), k = key();
    const char* le = pick(" \\le ", " ≤ ");
    std::vector<std::string> keeps;  // each component's condition for keeping (i, j)
    const auto named = [&](std::string condition, const char* name) {
      return cat({condition, pick(" \\;\\text{(", " ("), name, pick(")}", ")")});
    };
    if (o.causal) keeps.push_back(named(cat({k, le, q}), "@{formula.causal}"));
    if (n_.window()) {
      const auto offset = [&](const char* sign, double by) { return by == 0 ? q : cat({q, sign, js_number(by)}); };
      std::string window;
      if (!std::isinf(o.window_left)) window = cat({offset(pick(" - ", " − "), o.window_left), le});
      window += k;
      if (!std::isinf(o.window_right)) window = cat({window, le, offset(" + ", o.window_right)});
      window = named(window, "@{formula.window}");
      if (o.sink_tokens > 0) {
        window = cat({window, pick(" \\text{ @{formula.or} } ", " @{formula.or} "),
                      named(cat({k, pick(" < ", " < "), std::to_string(o.sink_tokens)}), "@{formula.sink}")});
      }
      keeps.push_back(window);
    }
    std::string all;
    for (size_t i = 0; i < keeps.size(); ++i) {
      if (i) all += pick(",\\; ", ", ");
      all += keeps[i];
    }
    const bool keep_mask = n_.mask && n_.options.mask_kind == MaskKind::Keep;
    const bool additive = n_.mask && !keep_mask;
    if (keep_mask) {
      all += cat({keeps.empty() ? "" : pick(",\\; ", ", "),
                  pick("\\text{@{formula.your_mask_keeps_it}}", "@{formula.your_mask_keeps_it}")});
    }
    if (additive) {
      const std::string yours = cat({pick("\\text{@{formula.your} } ", "@{formula.your} "), indexed("M")});
      if (keeps.empty()) return cat({indexed(own), " = ", yours});
      return cat({indexed(own), " = ", yours, pick(" \\text{ @{formula.if} } ", " @{formula.if} "), all,
                  pick("; \\text{ @{formula.else} } -\\infty", "; @{formula.else} −∞")});
    }
    return cat({indexed(own), pick(" = 1 \\text{ @{formula.if} } ", " = 1 @{formula.if} "), all,
                pick("; \\text{ @{formula.else} } 0", "; @{formula.else} 0")});
  }

  /// The masked scores: the scores where the mask keeps a key, -inf (or mask_fill) where it
  /// hides one; an additive mask is added.
  ATTN_NOINLINE std::string masked(const std::string& own, const std::string& S, const std::string& M) const {
    const double fill = n_.options.mask_fill;
    const std::string hidden = std::isinf(fill) ? pick("-\\infty", "−∞") : js_number(fill);
    const char* masked_fill = std::isinf(fill) ? "" : pick(" \\;\\text{(masked\\_fill)}", " (masked_fill)");
    const bool boolean = !n_.mask || n_.options.mask_kind == MaskKind::Keep;
    if (boolean) {
      return cat({own, " = ", S, pick(" \\text{ @{formula.where} } ", " @{formula.where} "), M, " = 1, ", hidden,
                  pick(" \\text{ @{formula.where} } ", " @{formula.where} "), M, " = 0", masked_fill});
    }
    const std::string sum = cat({own, " = ", S, " + ", M});
    if (std::isinf(fill)) return sum;
    return cat({sum, pick(",\\; ", ", "), hidden, pick(" \\text{ @{formula.where} } ", " @{formula.where} "), M,
                pick(" = -\\infty", " = −∞"), masked_fill});
  }

  /// QK-norm of each row of `x` (a head's d_k features) with the gains g_q or g_k.
  ATTN_NOINLINE std::string qk_norm(const std::string& own, const std::string& x, const char* which) const {
    const QkNorm& q = n_.options.qk_norm;
    const std::string eps = js_number(q.eps);
    const bool layer = q.type == QkNorm::Type::Layer;
    if (tex_) {
      const std::string g = cat({"g_{", which, "}"});
      return layer ? cat({own, " = \\frac{", x, " - \\operatorname{mean}(", x, ")}{\\sqrt{\\operatorname{var}(", x,
                          ") + \\varepsilon}} \\circ ", g, ",\\quad \\varepsilon = ", eps,
                          " \\;\\text{(@{formula.each_row})}"})
                   : cat({own, " = \\frac{", x, "}{\\sqrt{\\operatorname{mean}(", x, "^2) + \\varepsilon}} \\circ ", g,
                          ",\\quad \\varepsilon = ", eps, " \\;\\text{(@{formula.each_row})}"});
    }
    const std::string g = cat({"g_", which});
    return layer ? cat({own, " = (", x, " − mean(", x, ")) / √(var(", x, ") + ε) ∘ ", g, ", ε = ", eps,
                        " (@{formula.each_row})"})
                 : cat({own, " = ", x, " / √(mean(", x, "²) + ε) ∘ ", g, ", ε = ", eps, " (@{formula.each_row})"});
  }

  /// Differential attention's softmax of half k: Q_k K_kᵀ (features of the half), scaled, with the
  /// score options, along each row.
  ATTN_NOINLINE std::string half_softmax(const std::string& own, const Step& s, int k, const std::string& Q,
                                         const std::string& K) const {
    const Eigen::Index w = n_.d_k / 2, first = (k - 1) * w + 1, last = k * w;
    const std::string q = columns_of(Q, first, last), kk = columns_of(K, first, last);
    std::string inside = scaled(cat({q, pick("", "·"), transposed(kk)}));
    if (n_.options.softcap > 0) inside = cat({pick("\\operatorname{cap}(", "cap("), inside, ")"});
    if (!n_.alibi_slopes.empty()) inside = cat({inside, " + B", sup(s.head)});
    if (n_.has_mask()) inside = cat({inside, " + M", sup(s.head)});
    return cat({own, pick(" = \\operatorname{softmax}\\big(", " = softmax("), inside, pick("\\big)", ")"),
                pick(" \\quad\\text{(@{formula.along_each_row})}", " (@{formula.along_each_row})")});
  }

  /// The softmax with a sink logit s (gpt-oss): one more term in each denominator.
  ATTN_NOINLINE std::string sink_softmax(const std::string& own, const std::string& S, int head) const {
    const std::string s = js_number(n_.sink_logits[static_cast<size_t>(head)]);
    const std::string sum_index = columns_ ? pick("_{kj}", "_kj") : pick("_{ik}", "_ik");
    if (tex_) {
      return cat(
          {indexed(own), " = \\frac{e^{", indexed(S), "}}{e^{s} + \\sum_k e^{", S, sum_index, "}},\\quad s = ", s});
    }
    return cat({indexed(own), " = e^", indexed(S), " / (e^s + Σ_k e^", S, sum_index, "), s = ", s});
  }

  /// φ′ of linear attention's feature map, in words.
  std::string slope() const {
    switch (n_.feature_map()) {
      case FeatureMap::EluPlusOne:
        return tex_ ? "\\phi'(x) = 1 \\text{ @{formula.for} } x > 0,\\ e^x \\text{ @{formula.otherwise}}"
                    : "φ′(x) = 1 @{formula.for} x > 0, eˣ @{formula.otherwise}";
      case FeatureMap::Relu:
        return tex_ ? "\\phi'(x) = 1 \\text{ @{formula.for} } x > 0,\\ 0 \\text{ @{formula.otherwise}}"
                    : "φ′(x) = 1 @{formula.for} x > 0, 0 @{formula.otherwise}";
      case FeatureMap::Identity:
        break;
    }
    return tex_ ? "\\phi'(x) = 1" : "φ′(x) = 1";
  }

  /// φ(x) of linear attention's feature map, x being a step's symbol.
  std::string feature_map(const std::string& x) const {
    switch (n_.feature_map()) {
      case FeatureMap::EluPlusOne:
        return tex_ ? cat({"\\operatorname{elu}(", x, ") + 1"}) : cat({"elu(", x, ") + 1"});
      case FeatureMap::Relu:
        return tex_ ? cat({"\\max(0,\\, ", x, ")"}) : cat({"max(0, ", x, ")"});
      case FeatureMap::Identity:
        break;
    }
    return cat({x, pick(" \\;\\text{(@{formula.identity})}", " (@{formula.identity})")});
  }

  /// Λ = φ(Q)φ(K)ᵀ, with the decay γ^(i−j) and the causal mask when causal.
  ATTN_NOINLINE std::string linear_scores(const std::string& own, const std::string& q, const std::string& k) const {
    if (!n_.options.causal) return cat({own, " = ", q, pick("\\,", "·"), transposed(k)});
    const double gamma = n_.decay();
    const std::string i = query(), j = key();
    const char* minus = pick(" - ", " − ");
    const std::string decay = gamma == 1 ? std::string()
                              : tex_     ? cat({"\\,\\gamma^{", i, minus, j, "}"})
                                         : cat({"·γ^(", i, minus, j, ")"});
    const std::string gamma_is =
        gamma == 1 ? std::string() : cat({pick(",\\; \\gamma = ", ", γ = "), js_number(gamma)});
    if (tex_) {
      return cat({own, "_{ij} = ", q, "_i \\cdot ", k, "_j", decay, " \\text{ @{formula.where} } ", j, " \\le ", i,
                  ", \\; 0 \\text{ @{formula.where} } ", j, " > ", i, gamma_is});
    }
    return cat({own, "_ij = ", q, "_i · ", k, "_j", decay, " @{formula.where} ", j, " ≤ ", i, ", 0 @{formula.where} ",
                j, " > ", i, gamma_is});
  }

  /// Linear attention's head output: Λ·V, divided row by row by D when normalized.
  std::string linear_output(const std::string& scores, const std::string& V, const std::string& D) const {
    const std::string product = cat({scores, pick("\\,", "·"), V});
    if (D.empty())
      return cat({product, pick(" \\;\\text{(@{formula.not_normalized})}", " (@{formula.not_normalized})")});
    if (tex_) return cat({"(", product, ")_i \\,/\\, ", D, "_i \\;\\text{(@{formula.row_by_row})}"});
    return cat({"(", product, ")_i / ", D, "_i (@{formula.row_by_row})"});
  }

  /// Latent attention's steps (rows layout only: the columns layout refuses its inputs).
  template <typename InSymbol>
  ATTN_NOINLINE std::string latent(const Step& s, Id key, const std::string& own, const InSymbol& in_symbol) const {
    const char* dot = pick("\\,", "·");
    const std::string head = sup(s.head);
    const auto W = [&](const char* name, bool per_head) {
      return cat({sub("W", name), per_head ? head : std::string()});
    };
    const auto with_cache = [&](const std::string& fresh, const char* past) {
      if (n_.past == 0) return cat({own, " = ", fresh});
      if (!tex_) return cat({own, " = [", past, " ; ", fresh, "]"});
      return cat({own, " = \\begin{bmatrix} ", past, " \\\\ ", fresh, " \\end{bmatrix}"});
    };
    const auto rope_of = [&](const std::string& x) {
      return cat({pick("\\operatorname{RoPE}(", "RoPE("), x, ")", rope()});
    };
    switch (key) {
      case Id::CKV:
        return with_cache(cat({"X", dot, W("DKV", false)}), tex_ ? "c_{KV,\\text{past}}" : "c_KV,past");
      case Id::KR:
        return with_cache(rope_of(cat({"X", dot, W("KR", false)})), tex_ ? "k_{R,\\text{past}}" : "k_R,past");
      case Id::CQ:
        return cat({own, " = X", dot, W("DQ", false)});
      case Id::KC:
        return cat({own, " = ", in_symbol(0), dot, W("UK", true)});
      case Id::V:
        return cat({own, " = ", in_symbol(0), dot, W("UV", true)});
      case Id::QC:
        if (n_.W_DQ) return cat({own, " = ", in_symbol(0), dot, W("UQ", true)});
        return cat({own, " = X", dot, W("Q", true)});
      case Id::QR:
        return cat({own, " = ", rope_of(cat({n_.qr_from_cq ? in_symbol(0) : std::string("X"), dot, W("QR", true)}))});
      case Id::ScoresC:
      case Id::ScoresR:
        return cat({own, " = ", in_symbol(0), dot, transposed(in_symbol(1))});
      case Id::QAbsorbed:
        return cat({own, " = ", in_symbol(0), dot, transposed(W("UK", true)),
                    pick(" \\;\\text{(}W_{UK}\\text{ @{formula.folded_into_the_query})}",
                         " (W_UK @{formula.folded_into_the_query})")});
      case Id::ScoresCAbsorbed:
        return cat({own, " = ", in_symbol(0), dot, transposed(in_symbol(1)), pick(" \\;(= ", " (= "), sub("S", "C"),
                    head,
                    pick(": \\text{@{formula.no} } K_C \\text{ @{formula.computed}})",
                         ": @{formula.no} K_C @{formula.computed})")});
      case Id::OLatent:
        return cat({own, " = ", in_symbol(0), dot, in_symbol(1),
                    pick(" \\;\\text{(@{formula.weights_read_latents})}", " (@{formula.weights_read_latents})")});
      case Id::OutputAbsorbed: {
        const std::string ov =
            n_.W_O ? cat({W("UV", false), "^{(h)}", dot, W("O", false), "^{(h)}"}) : cat({W("UV", false), "^{(h)}"});
        const std::string ov_text = n_.W_O ? std::string("W_UV⁽ʰ⁾·W_O⁽ʰ⁾") : std::string("W_UV⁽ʰ⁾");
        const std::string bias = n_.b_O ? std::string(" + ") + sub("b", "O") : std::string();
        if (n_.W_O) {
          return tex_ ? cat({own, " = \\textstyle\\sum_h \\hat O^{(h)}\\,(", ov, ")", bias,
                             " \\;\\text{(}W_{UV}\\text{ @{formula.folded_into} }W_O)"})
                      : cat({own, " = Σ_h Ô⁽ʰ⁾·(", ov_text, ")", bias, " (W_UV @{formula.folded_into} W_O)"});
        }
        return tex_ ? cat({own, " = [\\,\\hat O^{(h)}\\,", ov, "\\,]_h \\;\\text{(@{formula.heads_side_by_side})}"})
                    : cat({own, " = [Ô⁽ʰ⁾·", ov_text, "]_h (@{formula.heads_side_by_side})"});
      }
      case Id::CacheSizes: {
        // MHA 2·h·d_h, GQA 2·g·d_h for each divisor g of heads between, MQA 2·d_h, MLA d_c + d_r.
        std::string out = cat({own, pick(" = \\text{@{formula.per_token}: }", " = @{formula.per_token}: ")});
        const std::string h = std::to_string(n_.heads), d_h = std::to_string(n_.d_h);
        const char* times = pick("\\cdot ", "·");
        out += cat({"MHA 2", times, h, times, d_h});
        for (int g = n_.heads - 1; g > 1; --g) {
          if (n_.heads % g == 0)
            out += cat({", GQA", pick("_{g=", "(g="), std::to_string(g), pick("} ", ") "), "2", times,
                        std::to_string(g), times, d_h});
        }
        if (n_.heads > 1) out += cat({", MQA 2", times, d_h});
        out += cat({", MLA ", std::to_string(n_.d_c), " + ", std::to_string(n_.d_r)});
        return out;
      }
      default:
        return own;
    }
  }

  /// A V (rows layout) or V A (columns layout).
  std::string weighted_sum(const std::string& A, const std::string& V) const {
    return columns_ ? cat({V, pick(" ", "·"), A}) : cat({A, pick(" ", "·"), V});
  }

  const Normalized& n_;
  bool tex_;
  bool columns_;
};

/// Problem inputs a step reads directly.
std::vector<std::string> given(const Step& s, const Entry& e, const Normalized& n) {
  switch (e.key) {
    case Id::DCQ:
      if (n.qr_from_cq) return {"W_UQ", "W_QR"};
      return {"W_UQ"};
    case Id::DCKV:
      return {"W_UK", "W_UV"};
    case Id::CKV:
      if (n.past > 0) return {"X", "W_DKV", "past_c_KV"};
      return {"X", "W_DKV"};
    case Id::KR:
      if (n.past > 0) return {"X", "W_KR", "past_k_R"};
      return {"X", "W_KR"};
    case Id::CQ:
      return {"X", "W_DQ"};
    case Id::KC:
    case Id::QAbsorbed:
      return {"W_UK"};
    case Id::QC:
      if (n.W_DQ) return {"W_UQ"};
      return {"X", "W_Q"};
    case Id::QR:
      if (n.qr_from_cq) return {"W_QR"};
      return {"X", "W_QR"};
    case Id::OutputAbsorbed:
      if (!n.W_O) return {"W_UV"};
      if (n.b_O) return {"W_UV", "W_O", "b_O"};
      return {"W_UV", "W_O"};
    case Id::Q:
    case Id::K:
    case Id::V: {
      if (n.latent) return {"W_UV"};
      if (n.direct) return {s.id};
      const auto& bias = e.key == Id::Q ? n.b_Q : e.key == Id::K ? n.b_K : n.b_V;
      std::vector<std::string> out;
      if (s.inputs.empty()) out.push_back(e.key == Id::Q || !n.cross ? "X" : "X_kv");  // else X_pos
      out.push_back("W_" + s.id);
      if (bias) out.push_back("b_" + s.id);
      return out;
    }
    case Id::Positional:
      if (n.options.positional == Positional::Learned) return {"P"};
      return {};
    case Id::XPos:
      return {"X"};
    case Id::KCache:
      return {"past_K"};
    case Id::VCache:
      return {"past_V"};
    case Id::Mask:
      if (n.mask) return {"mask"};
      return {};
    case Id::Gate:
      if (n.b_G)
        return s.inputs.empty() ? std::vector<std::string>{"X", "W_G", "b_G"} : std::vector<std::string>{"W_G", "b_G"};
      return s.inputs.empty() ? std::vector<std::string>{"X", "W_G"} : std::vector<std::string>{"W_G"};
    case Id::Output:
      if (!n.W_O) return {};
      if (n.b_O) return {"W_O", "b_O"};
      return {"W_O"};
    case Id::DO:
      if (n.dO) return {"dO"};
      return {};
    case Id::DHeadOutput:
      if (n.W_O) return {"W_O"};
      return {};
    case Id::DWDKV:
    case Id::DWKR:
    case Id::DWDQ:
      return {"X"};
    case Id::DWQR:
      if (n.qr_from_cq) return {};
      return {"X"};
    case Id::DWQ:
    case Id::DWK:
    case Id::DWV:
      if (n.latent) return {"X"};
      if (s.inputs.size() == 2) return {};  // X with its positions is a step
      return {e.key == Id::DWQ || !n.cross ? "X" : "X_kv"};
    case Id::DX:
      if (n.latent) {
        std::vector<std::string> out = {"W_DKV"};
        if (n.d_r > 0) out.push_back("W_KR");
        out.push_back(n.W_DQ ? "W_DQ" : "W_Q");
        if (n.d_r > 0 && !n.qr_from_cq) out.push_back("W_QR");
        return out;
      }
      if (n.cross) return n.W_G ? std::vector<std::string>{"W_Q", "W_G"} : std::vector<std::string>{"W_Q"};
      if (n.W_G) return {"W_Q", "W_K", "W_V", "W_G"};
      return {"W_Q", "W_K", "W_V"};
    case Id::DXkv:
      return {"W_K", "W_V"};
    default:
      return {};
  }
}

}  // namespace

std::vector<StepInfo> step_catalogue() {
  std::vector<StepInfo> out;
  for (const Entry& e : kCatalogue) out.push_back({e.id, e.key >= Id::DO});
  return out;
}

bool is_gradient_step(const std::string& id) {
  for (const Entry& e : kCatalogue) {
    if (id == e.id) return e.key >= Id::DO;
  }
  return false;
}

std::string given_symbol(const std::string& name, int head, const Normalized& n) {
  return Notation(n, true).given_symbol(name, head);
}

namespace {

// What describe() and describe_gradient() write alike: every field but the symbol and formulas.
const Entry& describe_fields(Step& s, const Normalized& n) {
  const Entry& e = entry(s.id);
  // The caption is a message of the catalogues (web/lib/locales: "step.<id>"), not words here.
  s.title_id = std::string("step.") + e.id;
  s.kind = e.kind;
  if (e.key == Id::Mask && n.mask && n.options.mask_kind == MaskKind::Additive) {
    s.kind = ValueKind::AdditiveBias;
  }
  if (e.key == Id::Weights && !n.lambdas.empty()) s.kind = ValueKind::Signed;  // A₁ − λA₂
  if (e.key == Id::DS && n.sigmoid) s.title_id = "step.dS.sigmoid";            // not a softmax
  s.row_axis = n.columns ? e.cols : e.rows;
  s.col_axis = n.columns ? e.rows : e.cols;
  s.given = given(s, e, n);
  if (s.head >= 0) {
    s.kv_group = n.kv_group(s.head);
    // The columns of the full projection (or of the concatenation) a per-head step is.
    const auto slice = [&](int block, Eigen::Index width) {
      s.feature_first = block * width;
      s.feature_count = width;
    };
    if (e.key == Id::Q || e.key == Id::QRot || e.key == Id::QNormed || e.key == Id::PhiQ || e.key == Id::DPhiQ) {
      slice(s.head, n.d_k);
    }
    if (e.key == Id::PhiK || e.key == Id::DPhiK) slice(s.kv_group, n.d_k);
    if (e.key == Id::K || e.key == Id::KRot || e.key == Id::KCache || e.key == Id::KNormed) slice(s.kv_group, n.d_k);
    if (e.key == Id::HeadNormed || e.key == Id::GatedOutput || e.key == Id::DHeadNormed || e.key == Id::DGatedOutput) {
      slice(s.head, n.d_v);
    }
    if (e.key == Id::Gate || e.key == Id::DGate) {
      if (n.gate_headwise)
        slice(s.head, 1);
      else
        slice(s.head, n.d_v);
    }
    if (e.key == Id::DQNormed) slice(s.head, n.d_k);
    if (e.key == Id::DKNormed) slice(s.kv_group, n.d_k);
    if (e.key == Id::V || e.key == Id::VCache) slice(s.kv_group, n.d_v);
    if (e.key == Id::HeadOutput || e.key == Id::DHeadOutput) slice(s.head, n.d_v);
    if (e.key == Id::KC || e.key == Id::QC || e.key == Id::DQC || e.key == Id::DKC) slice(s.head, n.d_h);
    if (e.key == Id::DQR) slice(s.head, n.d_r);
    if (e.key == Id::QR) slice(s.head, n.d_r);
    if (e.key == Id::DQ || e.key == Id::DQRot) slice(s.head, n.d_k);
    if (e.key == Id::DK || e.key == Id::DKRot || e.key == Id::DKCache) slice(s.kv_group, n.d_k);
    if (e.key == Id::DV || e.key == Id::DVCache) slice(s.kv_group, n.d_v);
  }
  return e;
}

/// A step's or an input's index range along `axis`: its rows or its columns (0: not its axis).
Eigen::Index extent(const Step& s, Axis axis) {
  return s.row_axis == axis ? s.values.rows() : s.col_axis == axis ? s.values.cols() : 0;
}

/// The token axis of an entry (queries or keys, whichever it has first in the rows layout).
std::optional<Axis> token_axis(const Entry& e) {
  for (Axis a : {e.rows, e.cols}) {
    if (a == Axis::Queries || a == Axis::Keys) return a;
  }
  return std::nullopt;
}

/// How step `s` (entry `e`) reads its input step `in`, in the rows layout: one rule per kind of
/// step, each saying which axes of the input are tied to the step's own (the same query, key or
/// feature, maybe shifted) and so which are read whole (a sum or a softmax runs along them):
///   matrix product (scores, weights·V, a projection): row of the left × column of the right;
///   softmax (weights): the whole row of the scores it read;
///   RoPE (Q_rot, K_rot): the token's row (a rotation mixes a feature with its pair);
///   cache (K_cache, V_cache): the new rows, shifted past the cached ones (given past_K/past_V);
///   concat: the head whose feature slice holds the column;
///   anything else (scaled, softcapped, biased, masked, X_pos, ...): the same cell.
/// Gradient steps by the same rules, the chain rule's products read backwards:
///   dA, dV, dQ, dK (and their _rot/_cache forms): a product summed over the axis the step lacks,
///   so each input is tied on the axes it shares with the step (dV[j][c] <- A's column j and the
///   output gradient's column c; dA[i][j] <- dO's row i and V's row j);
///   dS: the whole row of A and of dA (the softmax's Jacobian); dQ, dK from dQ_rot, dK_rot: the
///   token's row (RoPE turned back); the new keys' dK, dV: their rows of dK_cache, dV_cache; the
///   whole dQ, dK, dV, dpast_*: the heads whose feature slice holds the column (summed over a GQA
///   group); dW_*[a][b]: column a of what the weight multiplied, column b of the gradient; db_*:
///   the gradient's column; dX: its token's row of dQ, dK, dV.
/// web/lib/lineage.js follows these ties (and reads the problem's own inputs by its own rules).
Read read_of(const Step& s, const Entry& e, const Step& in) {
  const Entry& ie = entry(in.id);
  const auto named = [](Axis a) { return static_cast<TieAxis>(a); };  // the first four agree
  const auto both = [&](std::optional<Axis> a) {
    return a ? std::vector<Tie>{{named(*a), *a, 0}} : std::vector<Tie>{};
  };
  const auto has = [](const Entry& x, Axis a) { return x.rows == a || x.cols == a; };
  const auto is = [&](std::initializer_list<const char*> ids) {
    for (const char* id : ids) {
      if (in.id == id) return true;
    }
    return false;
  };
  const auto given = [&](const char* name) { return std::find(s.given.begin(), s.given.end(), name) != s.given.end(); };
  // The axes the step shares with its input, each the same index (a product summed over the other).
  const auto shared = [&]() {
    std::vector<Tie> out;
    for (Axis a : {e.rows, e.cols}) {
      if (has(ie, a)) out.push_back({named(a), a, 0});
    }
    return out;
  };
  const auto elementwise = [&]() { return std::vector<Tie>{{named(e.rows), e.rows, 0}, {named(e.cols), e.cols, 0}}; };
  const auto tokens = [&]() {
    const std::optional<Axis> from = token_axis(e), to = token_axis(ie);
    return from && to ? std::vector<Tie>{{named(*from), *to, 0}} : std::vector<Tie>{};
  };
  const auto from_slice = static_cast<double>(-in.feature_first);  // integers: no -0 on the wire
  const Tie queries{TieAxis::Queries, Axis::Queries, 0}, features{TieAxis::Features, Axis::Features, 0};
  std::vector<Tie> ties;
  switch (e.key) {
    case Id::DHeadOutput:
      ties = given("W_O")
                 ? std::vector<Tie>{queries}
                 : std::vector<Tie>{queries, {TieAxis::Features, Axis::Features, static_cast<double>(s.feature_first)}};
      break;
    case Id::DA:
    case Id::DVCache:
    case Id::DQRot:
    case Id::DKRot:
    case Id::DKCache:
    case Id::DQ:
    case Id::DK:
    case Id::DV:
    case Id::DPastK:
    case Id::DPastV:
      if (s.head < 0) {  // the whole gradient: each head's slice of its features
        ties = both(token_axis(ie));
        ties.push_back({TieAxis::Features, Axis::Features, from_slice});
      } else if (is({"dQ_rot", "dK_rot"})) {  // RoPE turned back: the token's row
        ties = both(token_axis(ie));
      } else if (is({"dK_cache", "dV_cache"})) {  // the new keys sit after the cached ones
        ties = {{TieAxis::Keys, Axis::Keys, static_cast<double>(extent(in, Axis::Keys) - extent(s, Axis::Keys))},
                features};
      } else {
        ties = shared();
      }
      break;
    case Id::DS:  // the softmax's Jacobian: whole rows
    case Id::Weights:
      ties = {queries};
      break;
    case Id::DWQ:
    case Id::DWK:
    case Id::DWV:
    case Id::DWO:  // [what the weight multiplied][what it made]
      ties = {{is({"dO", "dQ", "dK", "dV"}) ? TieAxis::Column : TieAxis::Row, Axis::Features, 0}};
      break;
    case Id::DbQ:
    case Id::DbK:
    case Id::DbV:
    case Id::DbO:
      ties = {{TieAxis::Column, Axis::Features, 0}};
      break;
    case Id::DX:
    case Id::DXkv:
    case Id::Q:
    case Id::K:
    case Id::V:
    case Id::QRot:
    case Id::KRot:  // a token's row (self-attention projects keys from X's rows, the queries)
      ties = tokens();
      break;
    case Id::Scores:  // the query's row of Q, the key's row of K
      ties = both(token_axis(ie));
      break;
    case Id::KCache:
    case Id::VCache:
      ties = {{TieAxis::Keys, Axis::Keys, static_cast<double>(extent(in, Axis::Keys) - extent(s, Axis::Keys))},
              features};
      break;
    case Id::Concat:
      ties = {queries, {TieAxis::Features, Axis::Features, from_slice}};
      break;
    case Id::HeadOutput:
    case Id::Output:
      if (s.inputs.size() == 2) {  // weights · V
        ties = {has(ie, Axis::Keys) && !has(ie, Axis::Features) ? queries : features};
      } else {
        ties = given("W_O") ? std::vector<Tie>{queries} : elementwise();
      }
      break;
    default:
      ties = elementwise();
  }
  // A tie to an axis the input lacks fixes none of its cells (the input is read whole along
  // it); the same tie twice (elementwise on features × features) is one.
  Read read;
  for (const Tie& t : ties) {
    const bool duplicate = std::any_of(read.ties.begin(), read.ties.end(), [&](const Tie& o) {
      return o.step == t.step && o.input == t.input && o.shift == t.shift;
    });
    if (has(ie, t.input) && !duplicate) read.ties.push_back(t);
  }
  return read;
}

/// Step::reads: how `s` reads each of its inputs.
void describe_reads(Step& s, const Entry& e, const std::vector<Step>& earlier) {
  s.reads.clear();
  for (int i : s.inputs) s.reads.push_back(read_of(s, e, earlier.at(static_cast<size_t>(i))));
}

}  // namespace

// Two functions, so that a module which only runs the forward pass (the core wasm) links none of
// the gradients' formulas.
void describe(Step& s, const std::vector<Step>& earlier, const Normalized& n) {
  const Entry& e = describe_fields(s, n);
  if (e.key >= Id::DO) throw std::logic_error("describe: gradient step '" + s.id + "' goes through describe_gradient");
  const Notation tex(n, true), text(n, false);
  s.symbol = tex.symbol(e, s.head);
  s.tex = tex.formula(s, e, earlier);
  s.text = text.formula(s, e, earlier);
  describe_reads(s, e, earlier);
}

void describe_gradient(Step& s, const std::vector<Step>& earlier, const Normalized& n) {
  const Entry& e = describe_fields(s, n);
  if (e.key < Id::DO) throw std::logic_error("describe_gradient: step '" + s.id + "' is not a gradient");
  const Notation tex(n, true), text(n, false);
  s.symbol = tex.symbol(e, s.head);
  s.tex = tex.gradient_formula(s, e, earlier);
  s.text = text.gradient_formula(s, e, earlier);
  describe_reads(s, e, earlier);
}

}  // namespace attn
