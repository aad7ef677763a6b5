// The output-only fast path's embind file (fast_attention.h), and _heapStats. Linked into both
// modules: attention.wasm (with bindings.cpp, the trace API) and the lean attention-fast.wasm
// behind `attention-explorer/fast`, which holds only this file and the fast kernels.

#include <emscripten/bind.h>
#include <emscripten/em_js.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "fast_attention.h"

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
//                          between calls (grown when too small). fast.js writes Q, K, V and the
//                          mask there through the module's heap views and reads the output back,
//                          so a call costs one embind crossing and the copies in and out.
//   _fastRun(header)    -> number of fully masked query rows. `header` is the address of 15
//                          doubles: float64?, q, k, v, mask, out (addresses), L, S, d_k, d_v,
//                          maskKind (0 none, 1 additive of Q's type, 2 keep bytes), scaleKind
//                          (0 divide by √d_k, 1 multiply by scaleValue, 2 divide by it),
//                          scaleValue, causal, rowOffset (first query row of this chunk). One
//                          argument: embind marshals each argument in JS, and 15 of them cost
//                          more than the whole 4-token problem.
//   _fastMemory()       -> a Uint8Array view whose .buffer is the current wasm memory (used when
//                          the module does not export HEAPU8).
//   _fastKernels()      -> "wasm-simd128" or "eigen".
// A C++ exception reaches JS as an Error carrying its message (TOOLCHAIN.md quirk 6).

namespace fast {

EM_JS(void, attn_fast_throw, (const char* message), { throw new Error(UTF8ToString(message)); });

std::vector<double>& scratch() {
  static std::vector<double> buffer;
  return buffer;
}

std::uintptr_t aligned_base() {
  const auto p = reinterpret_cast<std::uintptr_t>(scratch().data());
  return (p + 15) & ~static_cast<std::uintptr_t>(15);
}

double reserve_js(double bytes) {
  if (!(bytes >= 0) || bytes > 4.0e9) {
    attn_fast_throw("fast attention: the inputs do not fit in WebAssembly memory");
  }
  const auto doubles = static_cast<std::size_t>(bytes / 8) + 3;
  std::vector<double>& buffer = scratch();
  if (buffer.size() < doubles) {
    // Free the old block first: the peak heap holds one copy of the inputs, not two.
    std::vector<double>().swap(buffer);
    buffer.resize(doubles);
  }
  return static_cast<double>(aligned_base());
}

template <typename T>
double run_typed(double q, double k, double v, double mask, double out, double L, double S,
                 double d_k, double d_v, int mask_kind, int scale_kind, double scale_value,
                 bool causal, double row_offset) {
  auto ptr = [](double address) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)); };
  attn::FastProblem<T> p;
  p.Q = static_cast<const T*>(ptr(q));
  p.K = static_cast<const T*>(ptr(k));
  p.V = static_cast<const T*>(ptr(v));
  p.L = static_cast<Eigen::Index>(L);
  p.S = static_cast<Eigen::Index>(S);
  p.d_k = static_cast<Eigen::Index>(d_k);
  p.d_v = static_cast<Eigen::Index>(d_v);
  p.row_offset = static_cast<Eigen::Index>(row_offset);
  if (mask_kind == 1) p.additive_mask = static_cast<const T*>(ptr(mask));
  if (mask_kind == 2) p.keep_mask = static_cast<const std::uint8_t*>(ptr(mask));
  attn::FastOptions options;
  options.causal = causal;
  if (scale_kind == 1) options.scale = scale_value;
  if (scale_kind == 2) options.divisor = scale_value;
  const attn::FastReport report = attn::fast_attention<T>(p, options, static_cast<T*>(ptr(out)));
  return static_cast<double>(report.fully_masked_rows);
}

double run_js(double header_address) {
  static std::string message;
  try {
    const double* h = reinterpret_cast<const double*>(static_cast<std::uintptr_t>(header_address));
    const bool float64 = h[0] != 0, causal = h[13] != 0;
    const int mask_kind = static_cast<int>(h[10]), scale_kind = static_cast<int>(h[11]);
    return float64 ? run_typed<double>(h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9],
                                       mask_kind, scale_kind, h[12], causal, h[14])
                   : run_typed<float>(h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9],
                                      mask_kind, scale_kind, h[12], causal, h[14]);
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
    message = "unknown C++ exception";
  }
  // Thrown once every C++ object of the call is gone (the JS exception skips destructors).
  attn_fast_throw(message.c_str());
  return 0;
}

emscripten::val memory_js() {
  return emscripten::val(emscripten::typed_memory_view(
      16, reinterpret_cast<const std::uint8_t*>(aligned_base())));
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
}
