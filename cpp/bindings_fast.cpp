// The output-only fast path's embind file (fast_attention.h), _heapStats and _fastWireLayout
// (the fast path's section of the wire table, cpp/wire.h). Linked into both modules: attention.wasm (with bindings.cpp,
// the trace API) and the lean attention-fast.wasm behind `attention-explorer/fast`, which holds only this file and the
// fast kernels.

#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fast_attention.h"
#include "wire_embind.h"

using emscripten::val;

namespace {

val heap_stats_js() {
  val out = val::object();
  out.set("heapSize", static_cast<double>(emscripten_get_heap_size()));
  out.set("inUse", static_cast<double>(mallinfo().uordblks));
  out.set("sbrk", static_cast<double>(reinterpret_cast<std::uintptr_t>(sbrk(0))));
  return out;
}

// ---- the output-only path (fast_attention.h): private plumbing for web/lib/fast.js ----------
//
//   _fastReserve(bytes) -> address of a 16-byte aligned scratch block of at least `bytes`, kept
//                          between calls (grown when too small). fast.js writes the header
//                          (wire::kFastHeader), Q, K, V and the mask there through the module's
//                          heap views and reads the output back, so a call costs one embind
//                          crossing and the copies in and out.
//   _fastRun(header)    -> runs the chunk the header at address `header` describes, and writes
//                          its number of fully masked query rows into the header. One argument:
//                          embind marshals each argument in JS, and 15 of them cost more than
//                          the whole 4-token problem.
//   _fastMemory()       -> a Uint8Array view whose .buffer is the current wasm memory (used when
//                          the module does not export HEAPU8).
//   _fastKernels()      -> "wasm-simd128" or "eigen".
// Errors come back as returned Errors (wire::guarded), as in bindings.cpp.

namespace fast {

using attn::wire::guarded;

std::vector<double>& scratch() {
  static std::vector<double> buffer;
  return buffer;
}

std::uintptr_t aligned_base() {
  const auto p = reinterpret_cast<std::uintptr_t>(scratch().data());
  return (p + 15) & ~static_cast<std::uintptr_t>(15);
}

val reserve_js(double bytes) {
  return guarded([&] {
    if (!(bytes >= 0) || bytes > 4.0e9) {
      throw attn::input_error(attn::ErrorPlace(), "fast-memory");
    }
    const auto doubles = static_cast<std::size_t>(bytes / 8) + 3;
    std::vector<double>& buffer = scratch();
    if (buffer.size() < doubles) {
      // Free the old block first: the peak heap holds one copy of the inputs, not two.
      std::vector<double>().swap(buffer);
      buffer.resize(doubles);
    }
    return val(static_cast<double>(aligned_base()));
  });
}

template <typename T>
double run_typed(const double* h) {
  using namespace attn::wire;
  auto ptr = [](double address) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)); };
  attn::FastProblem<T> p;
  p.Q = static_cast<const T*>(ptr(h[kFastQ]));
  p.K = static_cast<const T*>(ptr(h[kFastK]));
  p.V = static_cast<const T*>(ptr(h[kFastV]));
  p.L = static_cast<Eigen::Index>(h[kFastL]);
  p.S = static_cast<Eigen::Index>(h[kFastS]);
  p.d_k = static_cast<Eigen::Index>(h[kFastDk]);
  p.d_v = static_cast<Eigen::Index>(h[kFastDv]);
  p.row_offset = static_cast<Eigen::Index>(h[kFastRowOffset]);
  switch (static_cast<FastMask>(decode(codes("fast_mask", kFastMasks), h[kFastMaskKind]))) {
    case FastMask::Additive:
      p.additive_mask = static_cast<const T*>(ptr(h[kFastMask]));
      break;
    case FastMask::Keep:
      p.keep_mask = static_cast<const std::uint8_t*>(ptr(h[kFastMask]));
      break;
    case FastMask::None:
      break;
  }
  attn::FastOptions options;
  options.causal = h[kFastCausal] != 0;
  const double value = h[kFastScaleValue];
  switch (static_cast<attn::Scale::Kind>(decode(codes("scale_kind", kScaleKinds), h[kFastScaleKind]))) {
    case attn::Scale::Kind::SqrtDk:
      break;
    case attn::Scale::Kind::None:
      options.scale = 1;
      break;
    case attn::Scale::Kind::Multiply:
      options.scale = value;
      break;
    case attn::Scale::Kind::DivideBy:
      options.divisor = value;
      break;
    case attn::Scale::Kind::DivideBySqrt:
      options.divisor_sqrt = value;
      break;
  }
  const attn::FastReport report = attn::fast_attention<T>(p, options, static_cast<T*>(ptr(h[kFastOut])));
  return static_cast<double>(report.fully_masked_rows);
}

val run_js(double header_address) {
  return guarded([&] {
    using namespace attn::wire;
    double* h = reinterpret_cast<double*>(static_cast<std::uintptr_t>(header_address));
    const auto precision = static_cast<attn::Precision>(decode(codes("precision", kPrecisions), h[kFastPrecision]));
    h[kFastFullyMasked] = precision == attn::Precision::Float64 ? run_typed<double>(h) : run_typed<float>(h);
    // Undefined rather than the count: returning a number costs one more JS call per chunk.
    return val::undefined();
  });
}

emscripten::val memory_js() {
  return emscripten::val(emscripten::typed_memory_view(16, reinterpret_cast<const std::uint8_t*>(aligned_base())));
}

std::string kernels_js() { return attn::fast_attention_kernels(); }

}  // namespace fast

}  // namespace

EMSCRIPTEN_BINDINGS(attention_fast) {
  emscripten::function("_heapStats", &heap_stats_js);
  emscripten::function("_fastReserve", &fast::reserve_js);
  emscripten::function("_fastRun", &fast::run_js);
  emscripten::function("_fastMemory", &fast::memory_js);
  emscripten::function("_fastKernels", &fast::kernels_js);
  emscripten::function("_fastWireLayout", &attn::wire::fast_layout);
}
