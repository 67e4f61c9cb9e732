#include "suite/nn/attention/proportional.h"

#include <ATen/ATen.h>

#include "suite/core/errors.h"
#include "suite/nn/attention/common.h"
#include "suite/nn/attention/kernel_registry.h"
#include "suite/nn/attention/softmax.h"

namespace lrb {

at::Tensor proportional_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  const at::Tensor& sizes, const at::Tensor& mask, std::int64_t chunk, double scale) {
  check_qkv(q, k, v, "proportional");
  const std::int64_t B = q.size(0), Nk = k.size(2);
  if (!sizes.defined()) throw UserError("proportional attention needs token sizes [B, N]");
  if (sizes.dim() != 2 || sizes.size(0) != B || sizes.size(1) != Nk)
    throw UserError("proportional attention: token sizes must be [B, Nk]");
  at::Tensor s = sizes.detach().to(q.device(), q.scalar_type());
  const at::Tensor keep = check_key_mask(mask, B, Nk, q, "proportional");
  // Padding keys may carry any size; they are masked anyway.
  if (keep.defined()) s = s.masked_fill(keep.logical_not(), 1);
  if (s.le(0).any().item<bool>()) throw UserError("proportional attention: token sizes must be > 0");
  const at::Tensor bias = s.log();
  if (chunk > 0) return chunked_softmax_attention(q, k, v, keep, chunk, scale, bias);
  return softmax_attention(q, k, v, keep, scale, bias);
}

namespace {

// `lrbench attend --kernel proportional`: its options and how it runs on q, k, v.
AttentionKernel proportional_kernel() {
  using namespace kernel_spec;
  return {"proportional", "ToMe proportional attention: softmax with log(token size) added to key logits",
          {{int_opt("chunk", 0, "queries per chunk; 0 computes all scores at once"), scale_opt()}},
          {"mask", "sizes"},
          [](const json& o, const AttentionTensors& in) {
            reject(in, "proportional", true, false, true);
            const std::int64_t chunk = o.at("chunk").get<std::int64_t>();
            AttentionRun r;
            r.out = proportional_attention(in.q, in.k, in.v, in.sizes, in.mask, chunk, o.at("scale").get<double>());
            const std::int64_t B = in.q.size(0), H = in.q.size(1), Nq = in.q.size(2), Nk = in.k.size(2);
            r.score_elements = chunk > 0 ? chunked_softmax_score_elements(B, H, Nq, Nk, chunk)
                                         : softmax_score_elements(B, H, Nq, Nk);
            return r;
          }};
}

}  // namespace

LRB_REGISTER_ATTENTION_KERNEL(60, proportional_kernel());

}  // namespace lrb
