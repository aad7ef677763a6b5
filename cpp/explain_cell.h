// Internal to explain(): one cell being explained, and how a worked calculation is written
// (Explanation::lines, text_id and params, numbers, terms). explain.cpp defines it and the forward steps'
// calculations; explain_gradients.cpp the gradient steps', in an object of its own, so that a
// module binding only explain_forward (the core wasm) links none of them.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "normalized.h"

namespace attn {

/// `symbol` with the subscript `sub`, in parentheses when it has a subscript already.
std::string indexed(const std::string& symbol, const std::string& sub);

/// A worked calculation's sentence: a message id (after "explain.") and its parameters
/// (Explanation::text_id, params; the words are in web/lib/locales/<lang>.json).
using Params = std::vector<std::pair<std::string, std::string>>;

/// What hid the key, the parameter `hidden` (message explain.hidden): e.components joined by
/// "_" ("causal_window"), "none" when nothing is named.
std::string hidden_key(const Explanation& e);

/// A term table's header in words: its message id, explain.term.<name> (a header that is a
/// symbol, "q", "x̂", "A₁", is written as it is).
inline std::string term(const char* name) { return std::string("explain.term.") + name; }

/// "yes" or "no": a parameter a message selects on.
inline std::string yes(bool b) { return b ? "yes" : "no"; }

/// `parts` with `between` between them.
std::string join(const std::vector<std::string>& parts, const char* between);

/// A formula's word: the placeholder @{formula.<id>} the page fills with the word in the
/// learner's language (web/lib/i18n.js fillFormula; English in the API's TeX).
inline std::string formula_word(const std::string& id) { return "@{formula." + id + "}"; }

/// Words joined by ", " as formula placeholders (what hid a key: "causal", "window", "mask").
inline std::string formula_words(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "" : ", ") + formula_word(id);
  return out;
}

/// Cell (row, col) of step `step_id` of `head` in `t`, the trace of `n` (with or without its
/// backward pass's steps), with its explanation `e` being filled in.
struct ExplainedCell {
  /// Finds the step (a per-head step asked for with head -1 answers for head 0, a step every
  /// head shares answers for head 0) and sets e's cell and value. Throws InputError if the step
  /// or the cell does not exist.
  ExplainedCell(const Normalized& n, const Trace& t, const std::string& step_id, int head, Eigen::Index row,
                Eigen::Index col);

  /// The calculation of a forward step (explain.cpp) or of a gradient step (explain_gradients.cpp).
  void forward();
  void gradient();

  const Normalized& n;
  const Trace& t;
  const std::string& step_id;
  const Step* step = nullptr;  ///< the step found: its head (not the one asked for) is the cell's
  Explanation e;
  // The rows layout: (r, c) is (query, key) for scores, (token, feature) otherwise.
  Eigen::Index r = 0, c = 0;
  std::string value;   ///< "@0", the value's placeholder
  std::string ij;      ///< "row,col" from 1, in the user's layout
  std::string r1, c1;  ///< r + 1 and c + 1
  std::string cell;    ///< the cell's own symbol with its subscripts

  /// Step `s`'s values in the rows layout.
  Matrix rows_layout(const Step& s) const;
  /// The k-th step this one is computed from, and its values in the rows layout.
  const Step& input_step(size_t k) const;
  Matrix input(size_t k) const;
  /// Subscripts in the user's layout from indices (from 1) in the rows layout.
  std::string at(const std::string& a, const std::string& b) const;
  /// The same entry of the k-th input step (an element-wise step).
  std::string same_entry(size_t k) const;

  // ---- writing the calculation (see Explanation::lines) ----
  /// e.text_id ("explain." + m.id) and e.params.
  void say(Message m);
  /// `@N` of a number: its place in e.numbers; numbers[0] is the value. (Take each into a
  /// variable before joining texts: the operands of + are evaluated in no fixed order.)
  std::string num(double x);
  /// left, right and their products, term by term.
  void dot(const Eigen::Ref<const Vector>& left, const Eigen::Ref<const Vector>& right);
  /// e.lines: the cell, then each right-hand side.
  void derive(std::initializer_list<std::string> rhs);
  /// e.terms: its caption a message (after "explain."), its headers words (term()) or symbols.
  void table(Message caption, std::vector<std::string> headers, std::string index,
             std::vector<std::vector<double>> columns, int highlight = -1);
  /// The mask's verdict on the cell's (query, key): hidden or not, by what, and the fill.
  void read_mask();
  /// A cell of a step given directly (one of the user's inputs).
  void given();
  /// A cell of RoPE's rotation of row r of `x` (the queries' at their positions, or the new keys'
  /// after the cached ones), or of its transpose (`back`: a gradient through the rotation): the
  /// pair, angle and products, the calculation and its text; a feature beyond RoPE's dimensions
  /// passes through (kind "unrotated").
  /// `position` (not NaN) and `from` (not empty) stand in for the token's position and the
  /// symbol of what is rotated when that is no step (latent attention's X·W_KR, c_Q·W_QR).
  void rotate_pair(const Matrix& x, bool query, bool back, double position = std::numeric_limits<double>::quiet_NaN(),
                   const std::string& from = "");
  /// The cells of multi-head latent attention's steps (explain.cpp); false: not one of them.
  bool latent_cell();
  /// The cells of multi-head latent attention's whole gradient steps (explain_gradients.cpp).
  bool latent_gradient();
  /// A cell copied from cell (from_r, from_c) of step `from`, both in the rows layout (kind "copy").
  void copy_cell(const Step& from, Eigen::Index from_r, Eigen::Index from_c, Message text);
};

}  // namespace attn
