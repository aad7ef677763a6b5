// The walkthroughs module's embind file (attention-walkthroughs.wasm): decode, FlashAttention's
// tiles, the online softmax and the gradients (cpp/practice.h, cpp/gradients.h), and _explain,
// which answers the cells of their steps too. Kept out of the core module (bindings.cpp,
// attention.wasm) so that a page which only runs the forward pass does not download them; web/lib/
// engine.js loads this module on demand (engine.loadWalkthroughs()).
//
// The same conventions as bindings.cpp: a problem comes packed (cpp/wire.h) in this module's own
// scratch block or as one Float64Array, results come back as packed records, and every C++
// exception as a returned Error (wire::guarded).

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <vector>

#include "bindings_shared.h"
#include "gradients.h"
#include "practice.h"
#include "wire_embind.h"

using attn::wire::guarded;
using emscripten::val;
using namespace attn::bindings;

namespace {

// The backward pass (cpp/gradients.h): the trace with its gradient steps and the loss, packed
// as the record kGradientsFields; dO comes in the problem's own slot.
val gradients_js(val packed) {
  return guarded([&] {
    const attn::Problem problem = problem_from(packed);
    const attn::Gradients g = attn::gradients(problem);
    return record_to_packed(attn::wire::kGradientsFields, attn::wire::GradientsRun{{g.trace, problem.options}, g.loss});
  });
}

// decode, tiles and the online softmax (cpp/practice.h): packed records, read like the trace.
val decode_js(val packed) {
  return guarded([&] { return record_to_packed(attn::wire::kDecodeFields, attn::decode(problem_from(packed))); });
}

// The block sizes as JS numbers, checked before they become integers.
val tiles_js(val packed, double block_q, double block_k) {
  return guarded([&] {
    const attn::Problem problem = problem_from(packed);
    attn::check_block_size("block_q", block_q);
    attn::check_block_size("block_k", block_k);
    const auto size = [](double b) { return static_cast<Eigen::Index>(std::min(b, 1e9)); };
    return record_to_packed(attn::wire::kTilesFields, attn::tiles(problem, size(block_q), size(block_k)));
  });
}

// Linear attention's recurrent (chunk 0) or chunked form; the chunk size as a JS number.
val recurrent_js(val packed, double chunk) {
  return guarded([&] {
    const attn::Problem problem = problem_from(packed);
    if (chunk != 0) attn::check_chunk_size(chunk);
    return record_to_packed(attn::wire::kRecurrentFields,
                            attn::recurrent(problem, static_cast<Eigen::Index>(std::min(chunk, 1e9))));
  });
}

// `row`: a Float64Array; `precision`: a code of the wire's precision list.
val online_softmax_js(val row, bool subtract_max, double precision) {
  return guarded([&] {
    std::vector<double> numbers(row["length"].as<std::size_t>());
    copy_in(row, numbers.data(), numbers.size());
    const auto p = static_cast<attn::Precision>(
        attn::wire::decode(attn::wire::codes("precision", attn::wire::kPrecisions), precision));
    return record_to_packed(attn::wire::kOnlineSoftmaxFields, attn::online_softmax(numbers, subtract_max, p));
  });
}

// The scratch block's address (see "the packed run") and its size in numbers.
}  // namespace

EMSCRIPTEN_BINDINGS(attention_walkthroughs) {
  emscripten::function("_runScratch", &run_scratch_js);
  emscripten::function("_decode", &decode_js);
  emscripten::function("_tiles", &tiles_js);
  emscripten::function("_onlineSoftmax", &online_softmax_js);
  emscripten::function("_recurrent", &recurrent_js);
  emscripten::function("_gradients", &gradients_js);
  emscripten::function("_explain", &explain_js<attn::explain>);
  emscripten::function("_wireLayout", &attn::wire::layout);
}
