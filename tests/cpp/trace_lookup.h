// Finding a trace's steps by id and head, and a random direct problem, for the Catch2 cases.
#pragma once

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "attention.h"
#include "numpy_random.h"

inline const attn::Step& find_step(const attn::Trace& t, const std::string& id, int head = 0) {
  for (const auto& s : t.steps) {
    if (s.id == id && s.head == head) return s;
  }
  FAIL("no step " << id << " for head " << head);
  throw std::logic_error("unreachable");
}

inline const attn::Matrix& values(const attn::Trace& t, const std::string& id, int head = 0) {
  return find_step(t, id, head).values;
}

/// "Q0", "K0", ..., "output": each step's id and head, in order.
inline std::vector<std::string> step_ids(const attn::Trace& t) {
  std::vector<std::string> ids;
  for (const auto& s : t.steps) ids.push_back(s.id + (s.head >= 0 ? std::to_string(s.head) : ""));
  return ids;
}

/// A step's reads as text: per input "input id: step axis=input axis+shift, ...", for the checks.
inline std::vector<std::string> reads_text(const attn::Trace& t, const attn::Step& s) {
  const char* axes[] = {"queries", "keys", "features", "positions", "row", "column"};
  std::vector<std::string> out;
  REQUIRE(s.reads.size() == s.inputs.size());
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    std::string line = t.steps[static_cast<size_t>(s.inputs[k])].id + ":";
    for (const attn::Tie& tie : s.reads[k].ties) {
      line += std::string(" ") + axes[static_cast<int>(tie.step)] + "=" + axes[static_cast<int>(tie.input)] +
              (tie.shift < 0 ? "" : "+") + std::to_string(static_cast<int>(tie.shift));
    }
    out.push_back(line);
  }
  return out;
}

/// Q, K, V given directly (numpy's randn after seeding with `seed`): L queries, S keys, one head
/// of d_k features, d_v = 3.
inline attn::Problem direct(unsigned seed, int L, int S, int d_k) {
  attn::RandomState rng(seed);
  attn::Problem p;
  p.Q = rng.randn(L, d_k);
  p.K = rng.randn(S, d_k);
  p.V = rng.randn(S, 3);
  return p;
}
