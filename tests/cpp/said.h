// A message of the core (attention.h Message) as one line, for the Catch2 cases.
#pragma once

#include <string>
#include <vector>

#include "attention.h"

using attn::said;  // a message as "id(name=value, ...)" (message.h)

inline std::vector<std::string> said(const std::vector<attn::Message>& messages) {
  std::vector<std::string> out;
  for (const auto& m : messages) out.push_back(said(m));
  return out;
}
