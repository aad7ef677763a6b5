// libFuzzer target: arbitrary bytes read as the doubles of a packed problem (cpp/wire.h, the
// format web/lib/wire.js writes) -> wire::unpack_problem -> attn::run. Only web/lib packs
// problems, but a bug there or a module of another version could hand the core anything: it must
// come back as an InputError with a message, never a crash, a hang or a sanitizer report.
// Possible since wire.h is plain C++ (the embind export is wire_embind.h).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attention.h"
#include "wire.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<double> packed(size / sizeof(double));
  if (!packed.empty()) std::memcpy(packed.data(), data, packed.size() * sizeof(double));
  try {
    const attn::Problem problem = attn::wire::unpack_problem(packed.data(), packed.size());
    (void)attn::run(problem);
  } catch (const attn::InputError& e) {
    if (std::string(e.what()).empty()) {
      std::fprintf(stderr, "\n*** fuzz_wire finding: an InputError with an empty message\n");
      std::abort();
    }
  }
  return 0;
}
