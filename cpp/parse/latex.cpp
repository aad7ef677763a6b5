// LaTeX: bmatrix, pmatrix, Bmatrix, vmatrix, Vmatrix, matrix, smallmatrix and array environments.
#include "scan.h"

namespace attn::parsing {
namespace {

class Latex : public Reader {
 public:
  explicit Latex(const Reader& from) : Reader(from) {}

  static bool is_latex_matrix(std::string_view environment) {
    if (ends_with(environment, "*")) environment.remove_suffix(1);
    for (std::string_view name :
         {"matrix", "bmatrix", "pmatrix", "Bmatrix", "vmatrix", "Vmatrix", "smallmatrix", "array"}) {
      if (environment == name) return true;
    }
    return false;
  }

  /// Text around the environment may only be math delimiters, or an assignment before it.
  static bool is_latex_delimiters(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
      if (is_space(text[i])) {
        ++i;
        continue;
      }
      const size_t before = i;
      for (std::string_view word :
           {"\\left", "\\right", "\\[", "\\]", "\\(", "\\)", "$", "(", ")", "[", "]", ".", ","}) {
        if (starts_with(text.substr(i), word)) {
          i += word.size();
          break;
        }
      }
      if (i == before) return false;
    }
    return true;
  }

  /// Skips one `{...}` or `[...]` group at text[i] (after blanks): the index after it.
  static size_t skip_group(std::string_view text, size_t i, char open, char close) {
    size_t j = i;
    while (j < text.size() && is_space(text[j])) ++j;
    if (j >= text.size() || text[j] != open) return i;
    int depth = 0;
    for (; j < text.size(); ++j) {
      if (text[j] == open) ++depth;
      if (text[j] == close && --depth == 0) return j + 1;
    }
    return i;
  }

  Matrix parse_latex() {
    tool_ = Tool::kLatex;
    const size_t begin = text_.find("\\begin{");
    const size_t name_end = text_.find('}', begin);
    const std::string_view environment =
        text_.substr(begin + 7, name_end == std::string_view::npos ? 0 : name_end - begin - 7);
    const int line = first_line_ + count_line_breaks(text_.substr(0, begin));
    if (!is_latex_matrix(environment)) {
      fail("parse-latex-environment",
           {{"line", str(line)}, {"begin", shorten("\\begin{" + std::string(environment) + "}")}});
    }
    const std::string before(trim(text_.substr(0, begin)));
    const bool assignment = !before.empty() && before.back() == '=';
    if (!assignment && !is_latex_delimiters(before)) {
      fail("parse-latex-before", {{"word", quote(before)}, {"begin", "\\begin{" + std::string(environment) + "}"}});
    }
    size_t body = skip_group(text_, name_end + 1, '[', ']');                          // bmatrix*[r], array[t]
    if (starts_with(environment, "array")) body = skip_group(text_, body, '{', '}');  // {cc}
    const std::string end_mark = "\\end{" + std::string(environment) + "}";
    const size_t end = text_.find(end_mark, body);
    if (end == std::string_view::npos) {
      fail("parse-latex-unclosed",
           {{"begin", "\\begin{" + std::string(environment) + "}"}, {"line", str(line)}, {"end", end_mark}});
    }
    const std::string_view after = trim(text_.substr(end + end_mark.size()));
    if (after.find("\\begin{") != std::string_view::npos) {
      fail("parse-latex-another", {{"begin", "\\begin{"}});
    }
    if (!is_latex_delimiters(after)) {
      fail("parse-latex-after", {{"word", quote(after)}});
    }
    format_ = "LaTeX " + std::string(environment);
    return read_latex_body(text_.substr(body, end - body));
  }

  Matrix read_latex_body(std::string_view body) {
    size_t rows = 0;
    size_t columns = 0;
    size_t in_row = 0;
    std::string cell;
    const auto end_cell = [&](bool end_of_row) {
      const std::string text(trim(cell));
      if (!end_of_row || !text.empty() || in_row > 0) {
        const Position at{rows + 1, in_row + 1};
        if (text.empty()) fail("parse-empty-cell", at);
        values_.push_back(read_latex_cell(text, at));
        ++in_row;
      }
      cell.clear();
      if (!end_of_row) return;
      if (in_row > 0) close_row(rows, columns, in_row);
      in_row = 0;
    };
    for (size_t i = 0; i < body.size(); ++i) {
      const char c = body[i];
      if (c == '%') {  // a comment, to the end of the line
        while (i + 1 < body.size() && body[i + 1] != '\n') ++i;
      } else if (c == '&') {
        end_cell(false);
      } else if (c == '\\' && i + 1 < body.size() && body[i + 1] == '\\') {
        end_cell(true);
        i = skip_group(body, i + 2, '[', ']') - 1;  // \\[2pt]
      } else if (c == '\\' && i + 1 < body.size() && is_letter(body[i + 1])) {
        size_t j = i + 1;
        while (j < body.size() && is_letter(body[j])) ++j;
        const std::string_view command = body.substr(i, j - i);
        if (command == "\\hline" || command == "\\midrule" || command == "\\toprule" || command == "\\bottomrule" ||
            command == "\\quad" || command == "\\qquad") {
          cell += ' ';
        } else if (command == "\\phantom" || command == "\\hphantom" || command == "\\vphantom" ||
                   command == "\\cline") {
          j = skip_group(body, j, '{', '}');
          cell += ' ';
        } else {
          cell.append(command);
        }
        i = j - 1;
      } else if (c == '\\' && i + 1 < body.size()) {  // \, \; \! \: and '\ ': spacing
        cell += ' ';
        ++i;
      } else if (c == '~') {
        cell += ' ';
      } else {
        cell += c;
      }
    }
    end_cell(true);
    return build(rows, columns, false);
  }

  /// One cell: a number, `\infty` with a sign, `{-1}`, `\num{1.5}`; a sign may stand apart.
  double read_latex_cell(std::string text, Position at) {
    for (std::string_view dots : {"\\cdots", "\\vdots", "\\ddots", "\\ldots", "\\dots", "\\hdots"}) {
      if (text.find(dots) != std::string::npos) {
        fail("parse-elided", at, {{"word", quote(dots)}, {"tool", tool_key(Tool::kLatex)}});
      }
    }
    const std::string shown = text;
    if (starts_with(text, "\\num{") && text.back() == '}') text = text.substr(5, text.size() - 6);
    std::string word;
    for (char c : text) {
      if (c != '{' && c != '}') word += c;
    }
    word = std::string(trim(word));
    if (!word.empty() && (word[0] == '-' || word[0] == '+')) {  // "- 1" as typed
      size_t k = 1;
      while (k < word.size() && is_space(word[k])) ++k;
      word = word[0] + word.substr(k);
    }
    const size_t infinity = word.find("\\infty");
    if (infinity != std::string::npos && infinity + 6 == word.size() && infinity <= 1) {
      word = word.substr(0, infinity) + "inf";
    }
    if (word.find_first_of(" \t\n\r\\") != std::string::npos) {
      fail("parse-not-number", at, {{"word", quote(shown)}});
    }
    return read_number(word, at);
  }
};

}  // namespace

ParsedMatrix read_latex(const Reader& from) {
  Latex reader(from);
  return reader.result(reader.parse_latex());
}

}  // namespace attn::parsing
