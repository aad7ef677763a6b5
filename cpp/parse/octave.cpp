// Octave's and MATLAB's output under `A =`: `Columns 1 through 8` blocks, a `1.0e+03 *` scale.
#include "scan.h"

namespace attn::parsing {
namespace {

class Octave : public Reader {
 public:
  explicit Octave(const Reader& from) : Reader(from) {}

  /// The rows under Octave's or MATLAB's `A =` (already dropped).
  Matrix parse_octave() {
    format_ = "Octave/MATLAB output";
    std::vector<Block> blocks;
    int scale = 0;
    bool data = false;
    for (const TextLine& line : split_lines(text_, first_line_)) {
      const std::string_view text = trim(line.text);
      if (text.empty()) continue;
      const std::vector<std::string_view> words = split_words(text);
      if (!data && (text == "Diagonal Matrix" || text == "Permutation Matrix")) continue;
      if (words[0] == "Columns" || words[0] == "Column") {  // Columns 9 through 16(:)
        Block block;
        block.line = line.number;
        std::string_view number = words.size() > 1 ? words[1] : std::string_view();
        if (ends_with(number, ":")) number.remove_suffix(1);  // Octave's `Column 9:`
        const long first_column = digits_value(number);
        if (first_column < 1) {
          if (words.size() == 1)
            fail("parse-octave-column-missing", {{"line", str(line.number)}, {"word", quote(words[0])}});
          fail("parse-octave-column",
               {{"line", str(line.number)}, {"word", quote(words[0])}, {"found", quote(words[1])}});
        }
        block.first_column = static_cast<size_t>(first_column);
        blocks.push_back(std::move(block));
        continue;
      }
      if (!data && words.size() == 2 && words[1] == "*" && starts_with(words[0], "1.0e")) {
        // MATLAB's common scale factor: `1.0e+03 *` above the rows.
        const std::string_view exponent = words[0].substr(4);
        const long magnitude = digits_value(exponent.substr(exponent.empty() ? 0 : 1));
        if (exponent.empty() || (exponent[0] != '+' && exponent[0] != '-') || magnitude < 0 || magnitude > 400) {
          fail("parse-octave-scale", {{"line", str(line.number)}, {"word", quote(words[0])}});
        }
        scale = static_cast<int>(exponent[0] == '-' ? -magnitude : magnitude);
        continue;
      }
      if (!data && text.find("\xc3\x97") != std::string_view::npos) continue;  // 2×2 logical array
      if (blocks.empty()) {
        blocks.emplace_back();
        blocks.back().line = line.number;
      }
      read_row(blocks.back(), words, 0, scale);
      data = true;
    }
    return assemble(blocks);
  }
};

}  // namespace

ParsedMatrix read_octave(const Reader& from) {
  Octave reader(from);
  return reader.result(reader.parse_octave());
}

}  // namespace attn::parsing
