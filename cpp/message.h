// Words for a learner as a message id and its parameters: the core names messages (steps'
// explanations, warnings, input errors); the words live only in the catalogues
// (web/lib/locales/<lang>.json), so every view and every language formats the same description.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace attn {

/// A message of the catalogues: its id and its named parameters (name, value as text: numbers are
/// formatted by the core, so what a learner copies parses back).
struct Message {
  Message() = default;
  // A constructor, not an aggregate, so that {"id"} (no parameters) needs no empty {} after it.
  Message(std::string id, std::vector<std::pair<std::string, std::string>> params = {})  // NOLINT
      : id(std::move(id)), params(std::move(params)) {}
  std::string id;
  std::vector<std::pair<std::string, std::string>> params;
};

/// A message as "id(name=value, ...)": what a C++ user reads (the words are the catalogues').
inline std::string said(const Message& m) {
  std::string out = m.id + "(";
  for (size_t k = 0; k < m.params.size(); ++k) out += (k ? ", " : "") + m.params[k].first + "=" + m.params[k].second;
  return out + ")";
}

}  // namespace attn
