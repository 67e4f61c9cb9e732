#include "suite/nn/attention/softmax.h"

#include <ATen/ATen.h>

#include <limits>

#include "suite/core/errors.h"
#include "suite/nn/attention/blocked_attention.h"
#include "suite/nn/attention/common.h"
#include "suite/nn/attention/kernel_registry.h"
#include "suite/nn/batched_matmul.h"
#include "suite/nn/cpu/small_head_softmax.h"

namespace lrb {
namespace {

at::Tensor check_key_bias(const at::Tensor& bias, std::int64_t batch, std::int64_t keys, const at::Tensor& like,
                          const char* kernel) {
  if (!bias.defined()) return bias;
  if (bias.dim() != 2 || bias.size(0) != batch || bias.size(1) != keys)
    throw UserError(std::string(kernel) + ": the key bias must be [B, Nk]");
  return bias.detach().to(like.device(), like.scalar_type());
}

}  // namespace

at::Tensor softmax_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                             double scale, const at::Tensor& key_bias) {
  check_qkv(q, k, v, "softmax");
  const std::int64_t B = q.size(0), Nk = k.size(2);
  const at::Tensor keep = check_key_mask(mask, B, Nk, q, "softmax");
  const at::Tensor bias = check_key_bias(key_bias, B, Nk, q, "softmax");
  if (fused_softmax_applies(q, k, v))
    return fused_softmax_attention(q, k, v, keep, resolve_scale(scale, q.size(3)), bias);
  // Scaling q (N*d) instead of the scores (N^2) saves one N x N pass and buffer.
  at::Tensor s = batched_matmul(q * resolve_scale(scale, q.size(3)), k.transpose(-2, -1));
  if (bias.defined()) s = s + bias.view({B, 1, 1, Nk});
  if (!keep.defined()) return batched_matmul(at::softmax(s, -1), v);
  // A batch element with no real key at all gives zero rows (as the chunked form does), not
  // NaN: its keys stay unmasked (finite softmax, finite gradients) and its output is zeroed.
  const at::Tensor dead = keep.logical_not().all(1).view({B, 1, 1, 1});
  const at::Tensor drop = keep.logical_not().view({B, 1, 1, Nk}).logical_and(dead.logical_not());
  s = s.masked_fill(drop, -std::numeric_limits<double>::infinity());
  return batched_matmul(at::softmax(s, -1), v).masked_fill(dead, 0);
}

at::Tensor chunked_softmax_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                     const at::Tensor& mask, std::int64_t chunk, double scale,
                                     const at::Tensor& key_bias) {
  check_qkv(q, k, v, "softmax (chunked)");
  if (chunk < 1) throw UserError("softmax (chunked): chunk must be at least 1; got " + std::to_string(chunk));
  const std::int64_t B = q.size(0), N = q.size(2), Nk = k.size(2);
  const at::Tensor keep = check_key_mask(mask, B, Nk, q, "softmax (chunked)");
  const at::Tensor bias = check_key_bias(key_bias, B, Nk, q, "softmax (chunked)");
  chunk = std::min(chunk, N);
  const std::int64_t blocks = ceil_div(N, chunk);
  const auto layout = make_dense_layout(blocks, chunk, Nk, keep.defined() ? keep.logical_not() : at::Tensor(), bias);
  const at::Tensor out = blocked_attention(pad_tokens(q, 0, blocks * chunk - N), k, v, layout,
                                           resolve_scale(scale, q.size(3)), kDefaultMaxScoreElements);
  return out.narrow(2, 0, N);
}

std::int64_t softmax_score_elements(std::int64_t batch, std::int64_t heads, std::int64_t q_tokens,
                                    std::int64_t k_tokens) {
  return batch * heads * q_tokens * k_tokens;
}

std::int64_t chunked_softmax_score_elements(std::int64_t batch, std::int64_t heads, std::int64_t q_tokens,
                                            std::int64_t k_tokens, std::int64_t chunk) {
  chunk = std::max<std::int64_t>(1, std::min(chunk, q_tokens));
  return batch * heads * ceil_div(q_tokens, chunk) * chunk * k_tokens;
}

namespace {

// `lrbench attend --kernel softmax`: its options and how it runs on q, k, v.
AttentionKernel softmax_kernel() {
  using namespace kernel_spec;
  return {"softmax", "full softmax attention (the reference); chunk > 0: query-chunked, O(N*chunk) memory",
          {{scale_opt(), int_opt("chunk", 0, "queries per chunk; 0 computes all N x N scores at once")}},
          {"mask"},
          [](const json& o, const AttentionTensors& in) {
            reject(in, "softmax", true, false, false);
            const std::int64_t chunk = o.at("chunk").get<std::int64_t>();
            const double scale = o.at("scale").get<double>();
            AttentionRun r;
            const std::int64_t B = in.q.size(0), H = in.q.size(1), Nq = in.q.size(2), Nk = in.k.size(2);
            if (chunk > 0) {
              r.out = chunked_softmax_attention(in.q, in.k, in.v, in.mask, chunk, scale);
              r.score_elements = chunked_softmax_score_elements(B, H, Nq, Nk, chunk);
            } else {
              r.out = softmax_attention(in.q, in.k, in.v, in.mask, scale);
              r.score_elements = softmax_score_elements(B, H, Nq, Nk);
            }
            return r;
          }};
}

}  // namespace

LRB_REGISTER_ATTENTION_KERNEL(10, softmax_kernel());

}  // namespace lrb
