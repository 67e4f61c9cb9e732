#pragma once
// Longformer's per-token states, for tests and analyses that look past the logits (which
// tokens a perturbation reaches through the sliding windows and the global CLS token).
#include <ATen/core/Tensor.h>

namespace lrb {

class Model;

// The token states after the last layer, [B, 1 + N, D] with the global CLS token first.
// `model` must come from the "longformer" registry entry (UserError otherwise).
at::Tensor longformer_token_states(Model& model, const at::Tensor& x);

}  // namespace lrb
