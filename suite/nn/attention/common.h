#pragma once
// Shared checks and small helpers of the attention kernels. Every kernel takes q, k, v as
// [B, H, N, d] and an optional key padding mask [B, N] (bool, true = real token).
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace lrb {

// q [B, H, Nq, d], k and v [B, H, Nk, d] (v may have its own last dim), same B, H, dtype,
// device, floating point. Throws UserError naming `kernel` and what to fix.
void check_qkv(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const std::string& kernel);

// Returns the mask as a bool [B, N] tensor on `like`'s device (undefined stays undefined).
// Throws UserError for another shape or a non-bool/integer dtype.
at::Tensor check_key_mask(const at::Tensor& mask, std::int64_t batch, std::int64_t tokens, const at::Tensor& like,
                          const std::string& kernel);

// Zero-pads dim 2 (tokens) of x [B, H, N, d] by `left` and `right` rows (differentiable).
at::Tensor pad_tokens(const at::Tensor& x, std::int64_t left, std::int64_t right);

// t (a key bias or drop flags broadcast to a group's scores [..., keys]) in `type`, its last
// axis `keys` long with stride 1, as the fused passes read a row's keys: a broadcast key axis
// is materialised, the other axes keep their sizes and strides (0 where broadcast). A 0-d t
// becomes [keys]. Undefined stays undefined.
at::Tensor with_contiguous_keys(const at::Tensor& t, std::int64_t keys, at::ScalarType type);

// 1/sqrt(d) when `scale` is 0 (the kernels' default), else `scale`.
double resolve_scale(double scale, std::int64_t head_dim);

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace lrb
