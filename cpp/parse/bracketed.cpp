// Bracketed text: NumPy print and repr output, Python/JSON lists, MATLAB literals, PyTorch,
// JAX, TensorFlow, Mathematica.
//
//  - No recursion: nesting is tracked on a small explicit stack capped at kMaxDepth bracket
//    levels (plus at most one wrapper per level), so hostile input (10000 '[') fails with a
//    message instead of overflowing the stack. Every byte is looked at a bounded number of times.
//  - Inside brackets a newline is only whitespace: numpy wraps long rows over several lines,
//    so `[1 2\n 3 4]` is ONE row of 4 (as numpy means it); MATLAB rows need ';'.
//  - Commas are optional separators inside brackets (numpy prints none), but an empty element
//    (`[1,,2]`, `[,1]`) is an error. One trailing comma (`[1, 2,]`, `1,2,` at a line's end, or
//    after the whole matrix) and one trailing ';' in MATLAB text are accepted.
//  - Depth 3 is accepted only for a list of column vectors (`[array([[1], [2]]), ...]`, or the
//    same as a 3-D nested list, shape k x r x 1): they become the k columns of an r x k matrix.
//    A 3-D array of one slice (shape 1 x r x c: a PyTorch or NumPy batch of one) is that slice,
//    the format's name saying that its batch axis was dropped. Any other 3-D array is read to its
//    end, so the refusal can name its slice shapes.
#include "scan.h"

#include <algorithm>

namespace attn::parsing {

/// A word that opens a wrapper around a list when '(' follows it: `array([[1, 2]])`.
struct Wrapper {
  std::string_view word;
  const char* format;
  Tool tool;
  bool numpy;  // NumPy's repr: only `dtype=` may follow the list
};

namespace {

// Bracket levels: a matrix needs 2, a list of column vectors 3.
constexpr int kMaxDepth = 3;

constexpr Wrapper kWrappers[] = {
    {"array", "NumPy array", Tool::kNumpy, true},
    {"np.array", "NumPy array", Tool::kNumpy, true},
    {"numpy.array", "NumPy array", Tool::kNumpy, true},
    {"matrix", "NumPy matrix", Tool::kNumpy, true},
    {"np.matrix", "NumPy matrix", Tool::kNumpy, true},
    {"numpy.matrix", "NumPy matrix", Tool::kNumpy, true},
    {"tensor", "PyTorch tensor", Tool::kTorch, false},
    {"torch.tensor", "PyTorch tensor", Tool::kTorch, false},
    {"Array", "JAX array", Tool::kJax, false},
    {"DeviceArray", "JAX array", Tool::kJax, false},
    {"jnp.array", "JAX array", Tool::kJax, false},
    {"tf.Tensor", "TensorFlow tensor", Tool::kTensorFlow, false},
    {"tf.constant", "TensorFlow tensor", Tool::kTensorFlow, false},
};

}  // namespace

const Wrapper* find_wrapper(std::string_view word) {
  for (const Wrapper& wrapper : kWrappers) {
    if (wrapper.word == word) return &wrapper;
  }
  return nullptr;
}

namespace {

/// `name=...`, as PyTorch, JAX and TensorFlow print keyword arguments after the values.
bool is_keyword_argument(std::string_view word) {
  const size_t equals = word.find('=');
  if (equals == 0 || equals == std::string_view::npos) return false;
  for (size_t i = 0; i < equals; ++i) {
    const char c = word[i];
    if (!is_letter(c) && c != '_' && !(i > 0 && is_digit(c))) return false;
  }
  return true;
}

class Bracketed : public Reader {
 public:
  explicit Bracketed(const Reader& from) : Reader(from) {}

  // One open bracket list or wrapper such as `array(`.
  struct Frame {
    const Wrapper* wrapper = nullptr;  // a wrapper `array(` ... `)`; otherwise a list
    std::string_view word;             // the wrapper as written, or the list's opening bracket
    int line = 1;                      // where it opened, for unbalanced-bracket messages
    // Lists:
    size_t count = 0;            // elements so far
    size_t row_start = 0;        // count at the last ';' (MATLAB rows, depth 1 only)
    bool expect_element = true;  // just after the bracket, ',' or ';': a separator here is an error
    bool has_lists = false;
    bool has_numbers = false;
    // Wrappers: 0 expects '[', 1 after the list, 2 after ',' (expects a keyword argument or
    // ')'), 3 after NumPy's dtype= (expects ')'), 4 after another keyword argument (expects
    // ',' or ')').
    int paren_state = 0;
  };

  Frame& list_at(int depth) { return stack_[static_cast<size_t>(list_index_[depth])]; }

  /// Row R, column C of the element that would come next at the current depth, in terms of the
  /// final matrix (for a list of column vectors, vector k is column k); just row R (column 0) in
  /// an outer list of rows.
  Position position() {
    switch (depth_) {
      case 1: {
        const Frame& list = list_at(1);
        if (list.has_lists) return Position{list.count + 1, 0};
        return Position{matlab_rows_.size() + 1, list.count - list.row_start + 1};
      }
      case 2:
        return Position{list_at(1).count + 1, list_at(2).count + 1};
      default:
        return Position{list_at(2).count + 1, list_at(1).count + 1};
    }
  }

  std::string opened(const Frame& frame) const { return "'" + std::string(frame.word) + (frame.wrapper ? "('" : "'"); }

  static char closing_of(std::string_view open) { return open == "{" ? '}' : ']'; }

  /// Checks that a list (a bracket or a wrapper) may start here, before pushing it.
  void check_list_may_start(const Token& token) {
    if (stack_.empty()) return;
    Frame& top = stack_.back();
    if (top.wrapper) {
      if (top.paren_state != 0 || token.kind != TokenKind::kOpen) {
        fail("parse-wrapper-no-list", {{"wrapper", opened(top)}, {"line", str(top.line)}, {"word", quote(token.text)}});
      }
      return;
    }
    if (top.has_numbers || (ndim_ != 0 && depth_ >= ndim_)) {
      fail("parse-not-number", position(), {{"word", quote(token.text)}});
    }
  }

  void open_list(const Token& token) {
    check_list_may_start(token);
    if (depth_ == kMaxDepth) {
      fail("parse-too-deep", {{"bracket", quote(token.text)}, {"line", str(token.line)}});
    }
    if (token.text == "{") braces_ = true;
    Frame frame;
    frame.word = token.text;
    frame.line = token.line;
    stack_.push_back(frame);
    ++depth_;
    list_index_[depth_] = static_cast<int>(stack_.size()) - 1;
  }

  void open_wrapper(const Token& token, const Wrapper* wrapper) {
    check_list_may_start(token);
    lexer_->next();  // the '(' seen by peek
    if (stack_.empty()) {
      outer_wrapper_ = wrapper;
      if (format_.empty()) tool_ = wrapper->tool;
    } else {
      inner_wrapper_ = wrapper;
    }
    Frame frame;
    frame.wrapper = wrapper;
    frame.word = token.text;
    frame.line = token.line;
    stack_.push_back(frame);
  }

  /// A list or wrapper has just been completed: it is one element of whatever encloses it.
  void element_done() {
    if (stack_.empty()) {
      done_ = true;
      return;
    }
    Frame& top = stack_.back();
    if (top.wrapper) {
      top.paren_state = 1;
    } else {
      ++top.count;
      top.has_lists = true;
      top.expect_element = false;
    }
  }

  void close_list(const Token& token) {
    if (stack_.empty()) {
      fail_unmatched(token);
    }
    Frame& top = stack_.back();
    if (top.wrapper || closing_of(top.word) != token.text[0]) {
      fail_wrong_close(token, top);
    }
    const size_t elements = top.count;
    if (depth_ == 1 && !top.has_lists) {
      // The last MATLAB row (or the only row); a trailing ';' leaves an empty one to drop.
      const size_t last_row = elements - top.row_start;
      if (last_row > 0 || matlab_rows_.empty()) matlab_rows_.push_back(last_row);
    } else if (depth_ == 2) {
      depth2_lengths_.push_back(elements);
    } else if (depth_ == 3) {
      depth3_lengths_.push_back(elements);
    }
    stack_.pop_back();
    --depth_;
    element_done();
  }

  void handle_word(const Token& token) {
    if (const Wrapper* wrapper = find_wrapper(token.text);
        wrapper != nullptr && lexer_->peek().kind == TokenKind::kLParen) {
      open_wrapper(token, wrapper);
      return;
    }
    if (stack_.empty()) {
      fail("parse-no-list", {{"line", str(token.line)}, {"word", quote(token.text)}});
    }
    Frame& top = stack_.back();
    if (top.wrapper) {
      handle_wrapper_word(top, token);
      return;
    }
    if (top.has_lists || (ndim_ != 0 && depth_ < ndim_)) {
      fail("parse-row-not-list", position(), {{"word", quote(token.text)}});
    }
    values_.push_back(read_number(token.text, position()));
    if (ndim_ == 0) ndim_ = depth_;
    ++top.count;
    top.has_numbers = true;
    top.expect_element = false;
  }

  /// A word after a wrapper's list: `dtype=float32`, `requires_grad=True`, `shape=(2, 2)`.
  void handle_wrapper_word(Frame& top, const Token& token) {
    if (top.paren_state == 2 && top.wrapper->numpy && starts_with(token.text, "dtype=") && token.text.size() > 6) {
      top.paren_state = 3;  // the dtype says nothing the numbers don't: ignored
      return;
    }
    if (top.paren_state == 2 && !top.wrapper->numpy && is_keyword_argument(token.text)) {
      top.paren_state = 4;  // device, dtype, requires_grad, grad_fn, shape: ignored
      if (token.text.back() == '=' && lexer_->peek().kind == TokenKind::kLParen) {
        skip_parenthesized();  // shape=(2, 2)
      }
      return;
    }
    // What may come next, a select in the message: the list, "',' or ')'", "'dtype=...' or ')'",
    // "a keyword argument or ')'", "')'".
    const char* expected = top.paren_state == 0   ? "list"
                           : top.paren_state == 1 ? "comma"
                           : top.paren_state == 2 ? (top.wrapper->numpy ? "dtype" : "keyword")
                           : top.paren_state == 3 ? "close"
                                                  : "comma";
    fail("parse-wrapper-word", {{"expected", expected},
                                {"wrapper", opened(top)},
                                {"line", str(top.line)},
                                {"word", quote(token.text)},
                                {"open", "'['"},
                                {"comma", "','"},
                                {"close", "')'"}});
  }

  void skip_parenthesized() {
    const Token open = lexer_->next();
    int depth = 1;
    while (depth > 0) {
      const Token token = lexer_->next();
      if (token.kind == TokenKind::kEnd) {
        fail("parse-unclosed", {{"open", "'('"}, {"line", str(open.line)}});
      }
      depth += token.kind == TokenKind::kLParen;
      depth -= token.kind == TokenKind::kRParen;
    }
  }

  void handle_comma(const Token& token) {
    if (stack_.empty()) {
      // One trailing comma after the whole matrix, as copied from a line of code.
      if (done_ && !trailing_separator_) {
        trailing_separator_ = true;
        return;
      }
      fail("parse-after-end-comma", {{"line", str(token.line)}});
    }
    Frame& top = stack_.back();
    if (top.wrapper) {
      if (top.paren_state != 1 && top.paren_state != 4) {
        fail("parse-wrapper-comma",
             {{"line", str(token.line)}, {"wrapper", opened(top)}, {"wrapper_line", str(top.line)}});
      }
      top.paren_state = 2;
      return;
    }
    if (top.expect_element) fail("parse-not-number", position(), {{"word", "','"}});
    top.expect_element = true;
    commas_ = true;
  }

  void handle_semicolon(const Token& token) {
    if (stack_.empty() && done_ && !trailing_separator_) {
      trailing_separator_ = true;  // `A = [1 2; 3 4];` as MATLAB source ends
      return;
    }
    const bool matlab_row_end = !stack_.empty() && !stack_.back().wrapper && depth_ == 1 && !stack_.back().has_lists;
    if (!matlab_row_end) {
      fail("parse-stray-semicolon", {{"line", str(token.line)}});
    }
    Frame& top = stack_.back();
    if (top.expect_element) fail("parse-not-number", position(), {{"word", "';'"}});
    matlab_rows_.push_back(top.count - top.row_start);
    top.row_start = top.count;
    top.expect_element = true;
    semicolons_ = true;
  }

  void handle_rparen(const Token& token) {
    if (stack_.empty()) {
      fail_unmatched(token);
    }
    Frame& top = stack_.back();
    if (!top.wrapper) fail_wrong_close(token, top);
    if (top.paren_state == 0) {
      fail("parse-wrapper-no-list", {{"wrapper", opened(top)}, {"line", str(top.line)}, {"word", "')'"}});
    }
    stack_.pop_back();
    element_done();
  }

  Matrix parse_bracketed() {
    Lexer lexer(text_, first_line_, LexerOptions{});
    lexer_ = &lexer;
    for (;;) {
      const Token token = lexer.next();
      if (token.kind == TokenKind::kEnd) break;
      if (done_ && token.kind != TokenKind::kComma && token.kind != TokenKind::kSemicolon) {
        if (token.kind == TokenKind::kClose || token.kind == TokenKind::kRParen) fail_unmatched(token);
        fail("parse-after-end", {{"word", quote(token.text)}, {"line", str(token.line)}});
      }
      switch (token.kind) {
        case TokenKind::kOpen:
          open_list(token);
          break;
        case TokenKind::kClose:
          close_list(token);
          break;
        case TokenKind::kWord:
          handle_word(token);
          break;
        case TokenKind::kComma:
          handle_comma(token);
          break;
        case TokenKind::kSemicolon:
          handle_semicolon(token);
          break;
        case TokenKind::kRParen:
          handle_rparen(token);
          break;
        case TokenKind::kLParen:
          if (stack_.empty()) fail("parse-no-list", {{"line", str(token.line)}, {"word", "'('"}});
          if (stack_.back().wrapper) {
            fail("parse-wrapper-no-list",
                 {{"wrapper", opened(stack_.back())}, {"line", str(stack_.back().line)}, {"word", "'('"}});
          }
          fail("parse-not-number", position(), {{"word", "'('"}});
        default:
          break;  // no newline tokens in this mode
      }
    }
    lexer_ = nullptr;
    if (!stack_.empty()) {
      const Frame& open = stack_.back();
      fail("parse-unclosed", {{"open", quote(open.wrapper ? "(" : open.word)}, {"line", str(open.line)}});
    }
    return finish();
  }

  /// Checks the collected shape, names the format and builds the matrix.
  Matrix finish() {
    if (ndim_ == 0) fail("parse-empty-lists");
    const bool column_vectors =
        std::all_of(depth3_lengths_.begin(), depth3_lengths_.end(), [](size_t n) { return n == 1; });
    size_t rows = 0;
    size_t columns = 0;
    if (ndim_ == 3 && !column_vectors) {
      if (depth2_lengths_.size() != 1) fail_3d();
      // One slice: its rows are the depth-3 lists (ragged rows are refused as any matrix's).
      for (size_t numbers : depth3_lengths_) close_row(rows, columns, numbers);
      name_bracketed_format();
      if (inner_wrapper_ != nullptr && outer_wrapper_ == nullptr) {
        format_ = std::string("list of one ") + inner_wrapper_->format;
      }
      format_ += " with its batch axis of 1 dropped";
      return build(rows, columns, false);
    }
    name_bracketed_format();
    if (ndim_ == 1) {
      for (size_t numbers : matlab_rows_) close_row(rows, columns, numbers);
      return build(rows, columns, false);
    }
    if (ndim_ == 2) {  // depth-2 lists are rows
      for (size_t numbers : depth2_lengths_) close_row(rows, columns, numbers);
      return build(rows, columns, false);
    }
    // ndim 3: depth-2 lists are column vectors, each of length r.
    for (size_t i = 1; i < depth2_lengths_.size(); ++i) {
      if (depth2_lengths_[i] == depth2_lengths_[0]) continue;
      fail("parse-column-vectors",
           {{"vector", str(i + 1)}, {"rows", str(depth2_lengths_[i])}, {"first", str(depth2_lengths_[0])}});
    }
    return build(depth2_lengths_[0], depth2_lengths_.size(), true);
  }

  /// A 3-D array that is not a list of column vectors: names its slice shapes (each "R x C" or
  /// `ragged`, rows of different lengths; the first 4 when they differ, `more` past them).
  [[noreturn]] void fail_3d() const {
    std::vector<std::string> shapes;
    bool any_ragged = false;
    size_t next_row = 0;
    for (size_t rows : depth2_lengths_) {
      const size_t columns = rows > 0 ? depth3_lengths_[next_row] : 0;
      bool ragged = false;
      for (size_t r = 0; r < rows; ++r) ragged = ragged || depth3_lengths_[next_row + r] != columns;
      next_row += rows;
      any_ragged = any_ragged || ragged;
      shapes.push_back(ragged ? "ragged" : str(rows) + " x " + str(columns));
    }
    const bool same = std::all_of(shapes.begin(), shapes.end(), [&](const std::string& s) { return s == shapes[0]; });
    if (same && !any_ragged) {
      fail("parse-3d", {{"slices", str(shapes.size())},
                        {"rows", str(depth2_lengths_[0])},
                        {"columns", str(depth2_lengths_[0] > 0 ? depth3_lengths_[0] : 0)}});
    }
    ErrorParams params{{"shown", str(std::min<size_t>(shapes.size(), 4))}};
    for (size_t s = 0; s < 4; ++s) params.push_back({"s" + str(s + 1), s < shapes.size() ? shapes[s] : ""});
    params.push_back({"more", shapes.size() > 4 ? "yes" : "no"});
    fail("parse-3d-differ", std::move(params));
  }

  /// A closing bracket or ')' that closes nothing.
  [[noreturn]] void fail_unmatched(const Token& token) const {
    const char* open = token.text == "}" ? "{" : token.text == ")" ? "(" : "[";
    fail("parse-unmatched-close", {{"close", quote(token.text)}, {"line", str(token.line)}, {"open", quote(open)}});
  }

  /// A closing bracket or ')' that does not close `top`.
  [[noreturn]] void fail_wrong_close(const Token& token, const Frame& top) const {
    fail("parse-wrong-close", {{"close", quote(token.text)},
                               {"line", str(token.line)},
                               {"open", quote(top.wrapper ? "(" : top.word)},
                               {"open_line", str(top.line)}});
  }

  void name_bracketed_format() {
    if (!format_.empty()) return;  // TensorFlow's repr around an array(...)
    if (outer_wrapper_ != nullptr) {
      format_ = outer_wrapper_->format;
    } else if (inner_wrapper_ != nullptr) {
      const std::string inner = inner_wrapper_->format;
      format_ = inner == "NumPy array" ? (ndim_ == 3 ? "list of NumPy column vectors" : "list of NumPy arrays")
                                       : "list of " + inner + "s";
    } else if (braces_) {
      format_ = "Mathematica list";
    } else if (semicolons_) {
      format_ = "MATLAB matrix";
    } else if (commas_) {
      format_ = "Python list";
    } else {
      format_ = "NumPy print output";
    }
  }

  Lexer* lexer_ = nullptr;
  std::vector<Frame> stack_;            // at most 2 * kMaxDepth frames
  int list_index_[kMaxDepth + 1] = {};  // stack_ index of the open list at each depth
  int depth_ = 0;                       // open bracket lists
  int ndim_ = 0;                        // depth of the numbers, 0 until the first one
  std::vector<size_t> matlab_rows_;     // row lengths of a depth-1 list
  std::vector<size_t> depth2_lengths_;  // lengths of the depth-2 lists, in order
  std::vector<size_t> depth3_lengths_;  // lengths of the depth-3 lists, in order
  const Wrapper* outer_wrapper_ = nullptr;
  const Wrapper* inner_wrapper_ = nullptr;
  bool braces_ = false;
  bool commas_ = false;
  bool semicolons_ = false;
  bool done_ = false;  // the outermost list or wrapper has closed
  bool trailing_separator_ = false;
};

}  // namespace

ParsedMatrix read_bracketed(const Reader& from) {
  Bracketed reader(from);
  return reader.result(reader.parse_bracketed());
}

}  // namespace attn::parsing
