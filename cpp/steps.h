// Internal to the core: the step catalogue. What each step of the trace is called, its symbol
// and formula for the problem's options (TeX and plain text), its axes and kind of numbers, the
// problem inputs it reads, how it reads each input step (Step::reads, for lineage), its
// key/value group and the feature slice it is. compute() emits the numbers and the data flow
// (Step::inputs); everything else a view shows about a step is written here, once.
#pragma once

#include <string>
#include <vector>

#include "attention.h"

namespace attn {

struct Normalized;

/// Fills every field of `step` but id, head, values and inputs (which the caller sets) for the
/// problem `n`. `earlier` are the trace's steps so far, which `step.inputs` index.
void describe(Step& step, const std::vector<Step>& earlier, const Normalized& n);

/// One entry of the step catalogue as the package reads it (wire.h layout().steps): its id and
/// whether it is a step of the backward pass. Its caption is the catalogues' message "step.<id>".
struct StepInfo {
  const char* id;
  bool gradient;
};

/// Every step the core can emit, in trace order: the forward pass's, then the backward pass's.
std::vector<StepInfo> step_catalogue();

/// Whether `id` names a step of the backward pass (gradients.h): dO, dA, dS, ..., dX.
bool is_gradient_step(const std::string& id);

/// A problem input's name in TeX as the formulas write it: X, X_{kv}, W_{Q}^{(2)} (the head's,
/// head -1 for none), \Omega_{Q} and \beta_{Q} in the columns layout, K_{\text{past}}.
std::string given_symbol(const std::string& name, int head, const Normalized& n);

/// A number as JavaScript's String(x) writes it (shortest round trip: 0.5, 3, 1e-7, 1e+21),
/// so formulas show option values and positions as they are written in a problem's JSON.
std::string js_number(double x);

/// describe() for a step of the backward pass (gradients.h): its formula is the chain rule.
void describe_gradient(Step& step, const std::vector<Step>& earlier, const Normalized& n);

}  // namespace attn
