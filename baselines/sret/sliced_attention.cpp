#include "baselines/sret/sliced_attention.h"

#include <ATen/ATen.h>

#include "suite/core/errors.h"
#include "suite/nn/attention/proportional.h"
#include "suite/nn/attention/softmax.h"

namespace lrb {
namespace {

// [B, H, N, d] -> [B * g, H, N / g, d]: group j holds tokens j*N/g ... (j+1)*N/g - 1.
at::Tensor to_groups(const at::Tensor& t, std::int64_t g) {
  const auto B = t.size(0), H = t.size(1), N = t.size(2), d = t.size(3);
  return t.view({B, H, g, N / g, d}).permute({0, 2, 1, 3, 4}).reshape({B * g, H, N / g, d});
}

}  // namespace

at::Tensor sliced_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, std::int64_t groups,
                            const at::Tensor& sizes) {
  const auto B = q.size(0), H = q.size(1), N = q.size(2), d = v.size(3);
  LRB_CHECK(groups >= 1 && N % groups == 0, "the token count is a multiple of the group count");
  if (groups == 1) return sizes.defined() ? proportional_attention(q, k, v, sizes) : softmax_attention(q, k, v);
  const at::Tensor qg = to_groups(q, groups), kg = to_groups(k, groups), vg = to_groups(v, groups);
  const at::Tensor out = sizes.defined() ? proportional_attention(qg, kg, vg, sizes.reshape({B * groups, N / groups}))
                                         : softmax_attention(qg, kg, vg);
  return out.view({B, groups, H, N / groups, d}).permute({0, 2, 1, 3, 4}).reshape({B, H, N, d});
}

}  // namespace lrb
