// The backward pass: how the gradient of a loss flows back through attention, step by step.
#pragma once

#include <optional>

#include "attention.h"

namespace attn {

/// The forward trace followed by every gradient step, for the loss L = Σ O ∘ dO.
struct Gradients {
  /// trace.steps: the forward steps of run(), then the gradient steps (their `inputs` index the
  /// same list). Per head: dhead_output (several heads or W_O), dA, dV (dV_cache with a cache),
  /// dS (the softmax's input), dS_kept (a mask), dS_uncapped (softcap), dscores (the scale),
  /// dQ_rot / dK_rot (RoPE), dK_cache, dQ, dK, dV. Whole (head -1): dO, then the gradients of
  /// the inputs as given: dQ, dK, dV, dpast_K, dpast_V, dW_O, db_O, dW_Q, db_Q, dW_K, db_K,
  /// dW_V, db_V, dX, dX_kv, dP (those that apply), in the problem's layout. Multi-head latent
  /// attention (the naive form): per head also dQ_C, dK_C, dq_R, dk_R; whole dk_R, dpast_k_R,
  /// dc_KV, dpast_c_KV, dW_UK, dW_UV, dW_DKV, dW_KR, dW_UQ or dW_Q, dW_QR, dc_Q, dW_DQ, dX.
  Trace trace;
  double loss = 0;  ///< Σ O ∘ dO, in double
};

/// The gradients of Σ O ∘ dO with respect to every input of `problem`, dO being problem.dO or
/// all ones. Computed in the problem's precision. Throws InputError for a problem run() refuses,
/// or a dO not shaped like the output.
Gradients gradients(const Problem& problem);

/// The same with `dO` in place of problem.dO.
Gradients gradients(const Problem& problem, const std::optional<Matrix>& dO);

}  // namespace attn
