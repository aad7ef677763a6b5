// Prints what a fuzz_run input decodes to and what attn::run makes of it: turns a finding
// (build-fuzz/artifacts/fuzz_run-crash-*) into a readable problem for a regression test.
//   scripts/fuzz.sh build && build-fuzz/replay FILE...
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

#include "problem_decoder.h"
#include "trace_invariants.h"

namespace {

const Eigen::IOFormat kFormat(Eigen::FullPrecision, 0, ", ", ",\n ", "[", "]", "[", "]");

template <typename M>
void show(const char* name, const std::optional<M>& m) {
  if (!m) return;
  std::cout << name << " (" << m->rows() << "x" << m->cols() << ") =\n" << m->format(kFormat) << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  for (int a = 1; a < argc; ++a) {
    std::ifstream file(argv[a], std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), {});
    const attn::Problem p = attn::fuzzing::decode_problem(bytes.data(), bytes.size());
    const attn::Options& o = p.options;
    std::cout << "== " << argv[a] << "\nlayout=" << (o.layout == attn::Layout::Columns ? "columns" : "rows")
              << " precision=" << (o.precision == attn::Precision::Float32 ? "float32" : "float64")
              << " causal=" << o.causal << " heads=" << o.heads << " kv_heads=" << o.kv_heads
              << " scale.kind=" << static_cast<int>(o.scale.kind) << " scale.value=" << o.scale.value
              << " softcap=" << o.softcap
              << " mask_kind=" << (o.mask_kind == attn::MaskKind::Keep ? "keep" : "additive") << "\n";
    std::cout.precision(17);
    show("Q", p.Q);
    show("K", p.K);
    show("V", p.V);
    show("X", p.X);
    show("X_kv", p.X_kv);
    show("W_Q", p.W_Q);
    show("W_K", p.W_K);
    show("W_V", p.W_V);
    show("W_O", p.W_O);
    show("b_Q", p.b_Q);
    show("b_K", p.b_K);
    show("b_V", p.b_V);
    show("b_O", p.b_O);
    show("mask", o.mask);
    try {
      const attn::Trace t = attn::run(p);
      for (const auto& s : t.steps) {
        std::cout << "-- " << s.id << " head " << s.head << "\n" << s.values.format(kFormat) << "\n";
      }
      for (const auto& w : t.warnings) {
        std::cout << "warning: " << w.id;
        for (const auto& [name, value] : w.params) std::cout << " " << name << "=" << value;
        std::cout << "\n";
      }
      std::cout << "invariants: " << attn::invariants::check_trace(p, t) << "\n";
      std::cout << "tame: " << attn::fuzzing::is_tame(p) << " finite: " << attn::invariants::check_all_finite(t)
                << " reference: " << attn::invariants::check_against_reference(p, t) << "\n";
    } catch (const std::exception& e) {
      std::cout << "InputError: " << e.what() << "\n";
    }
  }
}
