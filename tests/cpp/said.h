// A message of the core (attention.h Message) as one line, for the Catch2 cases.
#pragma once

#include <string>
#include <vector>

#include "attention.h"

/// A message as "id(name=value, ...)": the core's warnings compared by what they name, not by
/// words (the words are the catalogues').
inline std::string said(const attn::Message& m) {
  std::string out = m.id + "(";
  for (size_t k = 0; k < m.params.size(); ++k) out += (k ? ", " : "") + m.params[k].first + "=" + m.params[k].second;
  return out + ")";
}
inline std::vector<std::string> said(const std::vector<attn::Message>& messages) {
  std::vector<std::string> out;
  for (const auto& m : messages) out.push_back(said(m));
  return out;
}
