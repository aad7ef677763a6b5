// The English a user reads, for the Catch2 cases. The core writes message ids (formula words as
// @{formula.<id>}); the words live in web/lib/locales/en.json, which the package fills in. The
// cases compare with that English, read from the same catalogue.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

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
