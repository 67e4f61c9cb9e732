#pragma once
// Longformer's sliding-window attention: token i attends to keys i-w..i+w, plus global
// tokens that attend to all tokens and are attended by all.
//
// Layout (why it is cheap): queries are cut into blocks of b; block [s, s+b) is multiplied
// densely against keys [s-w, s+b+w), then the band |i-j| <= w is masked. That computes
// (2w+b) scores per query, (2w+b)/(2w+1) of the band's minimum (1.12 for w=256, b=64),
// where Hugging Face's overlapping 2w chunks cost about 2x. No N x N tensor exists on this
// path: working memory is one group of blocks (see blocked_attention.h), training included.
#include <ATen/core/Tensor.h>

#include <cstdint>

#include "suite/nn/attention/blocked_attention.h"

namespace lrb {

struct SlidingWindowOptions {
  std::int64_t window = 256;  // w: keys on each side (Longformer's classifiers: 256)
  // Query block b; 0 picks min(64, w+1), which keeps (2w+b)/(2w+1) <= 1.5 for any w.
  std::int64_t block = 0;
  double scale = 0;  // 0: 1/sqrt(d)
  std::int64_t max_score_elements = kDefaultMaxScoreElements;
};

// Separate projections for the global part (Longformer initialises them from the local
// ones; creating them is the model's business). Where given (all three or none), global
// queries use q rows of `q` and attend to all tokens through `k` and `v`; ordinary tokens
// still see the global tokens through the local k and v, as in the paper and in Hugging
// Face's implementation. Shapes as the local q, k, v.
struct GlobalProjections {
  at::Tensor q, k, v;
};

// q, k, v [B, H, N, d] -> [B, H, N, d]. Any N (padded internally; windows past either end
// see only real keys). mask [B, N] bool, true = real token: masked keys are never attended;
// outputs at masked query positions are unspecified (zero where no key is visible).
// global: token positions that attend to all and are attended by all, as int64 [g] (the
// same for every batch element), int64 [B, g], or bool [B, N] with the same count per row;
// positions must be distinct. A global key inside a query's window is counted once.
at::Tensor sliding_window_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                    const SlidingWindowOptions& options = {}, const at::Tensor& mask = {},
                                    const at::Tensor& global = {}, const GlobalProjections& global_qkv = {});

// The block size the kernel uses for these options and length.
std::int64_t sliding_window_block(const SlidingWindowOptions& options, std::int64_t tokens);

// Scores computed over the batch: B*H*(nb*b*(2w'+b+g) + g*N), nb = ceil(N/b), w' = min(w, N-1).
std::int64_t sliding_window_score_elements(std::int64_t batch, std::int64_t heads, std::int64_t tokens,
                                           const SlidingWindowOptions& options, std::int64_t global_tokens = 0);

}  // namespace lrb
