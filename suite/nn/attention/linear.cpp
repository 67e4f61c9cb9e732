#include "suite/nn/attention/linear.h"

#include <ATen/ATen.h>

#include "suite/core/errors.h"
#include "suite/nn/attention/common.h"

namespace lrb {
namespace {

at::Tensor feature(const at::Tensor& x, FeatureMap f) {
  switch (f) {
    case FeatureMap::EluPlusOne: return at::elu(x) + 1;
    case FeatureMap::Relu: return at::relu(x);
    case FeatureMap::Softplus: return at::softplus(x);
  }
  return x;
}

}  // namespace

FeatureMap parse_feature_map(const std::string& name) {
  if (name == "elu+1" || name == "elu") return FeatureMap::EluPlusOne;
  if (name == "relu") return FeatureMap::Relu;
  if (name == "softplus") return FeatureMap::Softplus;
  throw UserError("linear attention: unknown feature map '" + name + "'; use elu+1, relu or softplus");
}

LinearNormalization parse_linear_normalization(const std::string& name) {
  if (name == "row") return LinearNormalization::Row;
  if (name == "tau") return LinearNormalization::Tau;
  throw UserError("linear attention: unknown normalization '" + name + "'; use row or tau");
}

const char* feature_map_name(FeatureMap f) {
  switch (f) {
    case FeatureMap::EluPlusOne: return "elu+1";
    case FeatureMap::Relu: return "relu";
    case FeatureMap::Softplus: return "softplus";
  }
  return "?";
}

at::Tensor linear_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const LinearAttentionOptions& options, const at::Tensor& mask) {
  check_qkv(q, k, v, "linear");
  if (options.tau < 0) throw UserError("linear attention: tau must be > 0 (or 0 for sqrt(N))");
  const std::int64_t B = q.size(0), Nk = k.size(2);
  const at::Tensor keep = check_key_mask(mask, B, Nk, q, "linear");
  const at::Tensor fq = feature(q, options.feature_map);
  at::Tensor fk = feature(k, options.feature_map);
  if (keep.defined()) fk = fk * keep.view({B, 1, Nk, 1}).to(fk.scalar_type());
  const at::Tensor kv = at::matmul(fk.transpose(-2, -1), v);  // [B, H, d, dv]: the d x d state
  const at::Tensor num = at::matmul(fq, kv);
  if (options.normalization == LinearNormalization::Row) {
    const at::Tensor z = fk.sum(2).unsqueeze(-1);  // [B, H, d, 1]
    return num / (at::matmul(fq, z) + options.eps);
  }
  if (options.tau > 0) return num / options.tau;
  const at::Tensor real = keep.defined() ? keep.sum(1).to(q.scalar_type())
                                         : at::full({B}, static_cast<double>(Nk), q.options());
  return num / real.clamp_min(1).sqrt().view({B, 1, 1, 1});
}

}  // namespace lrb
