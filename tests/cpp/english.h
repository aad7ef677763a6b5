// The English a user reads, for the Catch2 cases. The core writes message ids (formula words as
// @{formula.<id>}); the words live in web/lib/locales/en.json, which the package fills in. The
// cases compare with that English, read from the same catalogue.
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "matrix.h"

inline const nlohmann::json& english_catalogue() {
  static const nlohmann::json catalogue = [] {
    std::ifstream in(ATTN_LOCALES_DIR "/en.json");
    if (!in) throw std::runtime_error("cannot read " ATTN_LOCALES_DIR "/en.json");
    return nlohmann::json::parse(in);
  }();
  return catalogue;
}

/// A formula (TeX or text) or an explanation's line with its @{formula.<id>} words in English, as
/// web/lib/i18n.js fillFormula gives them (no English formula word holds a TeX special character,
/// so TeX and text fill the same).
inline std::string english_formula(std::string s) {
  for (size_t at = s.find("@{"); at != std::string::npos; at = s.find("@{", at)) {
    const size_t end = s.find('}', at);
    if (end == std::string::npos) throw std::runtime_error("unclosed @{ in " + s);
    const std::string id = s.substr(at + 2, end - at - 2);
    const auto& catalogue = english_catalogue();
    if (!catalogue.contains(id)) throw std::runtime_error("no English for " + id);
    const std::string word = catalogue.at(id).get<std::string>();
    s.replace(at, end - at + 1, word);
    at += word.size();
  }
  return s;
}

namespace english_detail {
/// The text from `at` up to the brace that closes the one before it (nested braces counted).
inline size_t closing(const std::string& s, size_t at) {
  for (int depth = 1; at < s.size(); ++at) {
    if (s[at] == '{') ++depth;
    if (s[at] == '}' && --depth == 0) return at;
  }
  throw std::runtime_error("unclosed { in " + s);
}
inline std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}
/// The part of ICU MessageFormat the catalogue's error messages use: {name} and
/// {name, select, key {text} ... other {text}} and {n, plural, one {# x} other {# xs}} (English's
/// rules; '' is an apostrophe, no other quoting).
inline std::string format(const std::string& message, const attn::Message& m) {
  auto value = [&](const std::string& name) {
    for (const auto& [k, v] : m.params)
      if (k == name) return v;
    throw std::runtime_error(m.id + " has no parameter " + name);
  };
  std::string out;
  for (size_t at = 0; at < message.size();) {
    if (message.compare(at, 2, "''") == 0) {  // ICU's quoted apostrophe
      out += '\'';
      at += 2;
      continue;
    }
    if (message[at] != '{') {
      out += message[at++];
      continue;
    }
    const size_t end = closing(message, at + 1);
    const std::string inside = message.substr(at + 1, end - at - 1);
    at = end + 1;
    const size_t comma = inside.find(',');
    if (comma == std::string::npos) {
      out += value(trim(inside));
      continue;
    }
    const std::string name = trim(inside.substr(0, comma));
    const size_t second = inside.find(',', comma + 1);
    const std::string type = second == std::string::npos ? "" : trim(inside.substr(comma + 1, second - comma - 1));
    if (type != "select" && type != "plural") throw std::runtime_error("only {name}, select and plural in " + message);
    const std::string chosen = value(name);
    // English's plural rules: one for 1, other otherwise; an exact =n first.
    const std::string wanted = type == "plural" ? (chosen == "1" ? "one" : "other") : chosen;
    std::string branch, other;
    bool found = false;  // an exact match (a branch may be empty)
    for (size_t k = second + 1; k < inside.size() && !found;) {
      const size_t open = inside.find('{', k);
      if (open == std::string::npos) break;
      const std::string key = trim(inside.substr(k, open - k));
      const size_t close = closing(inside, open + 1);
      const std::string text = inside.substr(open + 1, close - open - 1);
      if (key == "=" + chosen || (key == wanted && type == "select")) {
        branch = text;
        found = true;
      }
      if (key == wanted) other = text;  // a plural's category, unless an exact =n comes
      if (key == "other" && other.empty()) other = text;
      k = close + 1;
    }
    std::string chosen_text = found ? branch : other;
    if (type == "plural") {
      for (size_t hash = chosen_text.find('#'); hash != std::string::npos; hash = chosen_text.find('#', hash)) {
        chosen_text.replace(hash, 1, chosen);
        hash += chosen.size();
      }
    }
    out += format(chosen_text, m);
  }
  return out;
}
}  // namespace english_detail

/// A message of the core (an error's, a warning's) in English, as web/lib/i18n.js `english` gives it.
inline std::string english(const attn::Message& m) {
  const auto& catalogue = english_catalogue();
  if (!catalogue.contains(m.id)) throw std::runtime_error("no English for " + m.id);
  return english_detail::format(catalogue.at(m.id).get<std::string>(), m);
}

/// What `body` throws as a user reads it: an InputError's message in English (its what() when it
/// has no id yet), another exception's what().
template <class Body>
std::string english_thrown(Body&& body) {
  try {
    body();
  } catch (const attn::InputError& e) {
    return e.message().id.empty() ? e.what() : english(e.message());
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(nothing thrown)";
}
inline Catch::Matchers::StdString::EqualsMatcher english_matcher(const std::string& text) {
  return Catch::Equals(text);
}
inline Catch::Matchers::StdString::EqualsMatcher english_matcher(const char* text) { return Catch::Equals(text); }
template <class Matcher>
const Matcher& english_matcher(const Matcher& matcher) {
  return matcher;
}
/// CHECK_THROWS_WITH for the core's errors: the English the user reads (english(e.message())),
/// compared with a string or a Catch2 string matcher.
#define CHECK_THROWS_SAYING(expr, expected) \
  CHECK_THAT(english_thrown([&] { static_cast<void>(expr); }), english_matcher(expected))
#define REQUIRE_THROWS_SAYING(expr, expected) \
  REQUIRE_THAT(english_thrown([&] { static_cast<void>(expr); }), english_matcher(expected))
