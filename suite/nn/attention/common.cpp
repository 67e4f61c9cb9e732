#include "suite/nn/attention/common.h"

#include <ATen/ATen.h>

#include <cmath>
#include <vector>

#include "suite/core/errors.h"

namespace lrb {
namespace {

std::string shape_of(const at::Tensor& t) {
  std::string s = "[";
  for (std::int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

}  // namespace

void check_qkv(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const std::string& kernel) {
  if (!q.defined() || !k.defined() || !v.defined())
    throw UserError(kernel + ": q, k and v are all required");
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4)
    throw UserError(kernel + ": q, k, v must be [B, H, N, d]; got q " + shape_of(q) + ", k " + shape_of(k) +
                    ", v " + shape_of(v));
  if (k.size(0) != q.size(0) || v.size(0) != q.size(0) || k.size(1) != q.size(1) || v.size(1) != q.size(1))
    throw UserError(kernel + ": q, k, v must share batch and heads; got q " + shape_of(q) + ", k " + shape_of(k) +
                    ", v " + shape_of(v));
  if (k.size(3) != q.size(3))
    throw UserError(kernel + ": q and k must have the same head dim; got " + shape_of(q) + " and " + shape_of(k));
  if (k.size(2) != v.size(2))
    throw UserError(kernel + ": k and v must have the same number of tokens; got " + shape_of(k) + " and " +
                    shape_of(v));
  if (q.size(2) == 0 || k.size(2) == 0) throw UserError(kernel + ": q and k need at least one token");
  if (!at::isFloatingType(q.scalar_type()) || k.scalar_type() != q.scalar_type() ||
      v.scalar_type() != q.scalar_type())
    throw UserError(kernel + ": q, k, v must share one floating dtype");
  if (k.device() != q.device() || v.device() != q.device())
    throw UserError(kernel + ": q, k, v must be on one device");
}

at::Tensor check_key_mask(const at::Tensor& mask, std::int64_t batch, std::int64_t tokens, const at::Tensor& like,
                          const std::string& kernel) {
  if (!mask.defined()) return mask;
  if (mask.dim() != 2 || mask.size(0) != batch || mask.size(1) != tokens)
    throw UserError(kernel + ": the key padding mask must be [B, N] = [" + std::to_string(batch) + ", " +
                    std::to_string(tokens) + "]; got " + shape_of(mask));
  if (mask.scalar_type() != at::kBool && !at::isIntegralType(mask.scalar_type(), /*includeBool=*/true))
    throw UserError(kernel + ": the key padding mask must be bool (true = real token)");
  return mask.to(like.device(), at::kBool);
}

at::Tensor with_contiguous_keys(const at::Tensor& t, std::int64_t keys, at::ScalarType type) {
  if (!t.defined()) return t;
  at::Tensor x = t.to(type);
  if (x.dim() == 0) x = x.view({1});
  if (x.stride(-1) != 1 || x.size(-1) != keys) {
    std::vector<std::int64_t> sizes = x.sizes().vec();
    sizes.back() = keys;
    x = x.expand(sizes).contiguous();
  }
  return x;
}

at::Tensor pad_tokens(const at::Tensor& x, std::int64_t left, std::int64_t right) {
  if (left == 0 && right == 0) return x;
  return at::constant_pad_nd(x, {0, 0, left, right}, 0);
}

double resolve_scale(double scale, std::int64_t head_dim) {
  return scale != 0 ? scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
}

}  // namespace lrb
