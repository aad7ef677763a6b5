// Internal to the core: the step catalogue. What each step of the trace is called, its symbol
// and formula for the problem's options (TeX and plain text), its axes and kind of numbers, the
// problem inputs it reads, its key/value group and the feature slice it is. compute() emits
// the numbers and the data flow (Step::inputs); everything else a view shows about a step is
// written here, once.
#pragma once

#include <string>
#include <vector>

#include "attention.h"

namespace attn {

struct Normalized;

/// Fills every field of `step` but id, head, values and inputs (which the caller sets) for the
/// problem `n`. `earlier` are the trace's steps so far, which `step.inputs` index.
void describe(Step& step, const std::vector<Step>& earlier, const Normalized& n);

}  // namespace attn
