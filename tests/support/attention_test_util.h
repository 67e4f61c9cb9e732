#pragma once
// Helpers of the attention tests: run a kernel in float32 with autograd, run a dense masked
// reference in float64 from the same inputs, compare with the relative error
//   rel(a, b) = max|a - b| / max|b|   (b the float64 reference).
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>  // at::NoGradGuard (ATen.h no longer brings it in LibTorch 2.x)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "suite/nn/cpu/small_head_softmax.h"
#include "tests/support/simd_levels.h"

namespace lrb::test {

inline constexpr double kTolerance = 1e-5;

// max|a - b|, in float64: where a tolerance is in the values' own units.
inline double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.detach().to(at::kDouble) - b.detach().to(at::kDouble)).abs().max().item<double>();
}

inline double rel_error(const at::Tensor& a, const at::Tensor& b) {
  const double denom = b.detach().to(at::kDouble).abs().max().item<double>();
  const double num = max_abs_diff(a, b);
  return denom > 0 ? num / denom : num;
}

// The device the kernels under test run on: LRB_TEST_DEVICE ("cuda", "cuda:1";
// scripts/device_check.sh sets it), else the CPU. The float64 reference runs on the CPU.
inline at::Device test_device() {
  const char* d = std::getenv("LRB_TEST_DEVICE");
  return d && *d ? at::Device(std::string(d)) : at::Device(at::kCPU);
}

using Kernel = std::function<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>;

struct Outputs {
  at::Tensor out, dq, dk, dv;
};

// Runs `fn` on copies of q, k, v in `dtype` on `device` and back-propagates `upstream`;
// the results come back to the CPU.
inline Outputs run(const Kernel& fn, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                   const at::Tensor& upstream, at::ScalarType dtype, at::Device device = at::kCPU) {
  at::Tensor qq = q.detach().to(device, dtype).requires_grad_(true);
  at::Tensor kk = k.detach().to(device, dtype).requires_grad_(true);
  at::Tensor vv = v.detach().to(device, dtype).requires_grad_(true);
  const at::Tensor out = fn(qq, kk, vv);
  out.backward(upstream.to(device, dtype));
  return {out.detach().cpu(), qq.grad().cpu(), kk.grad().cpu(), vv.grad().cpu()};
}

// A kernel with a fast path and a switch to its general one (`use_general_path(true)` takes
// the general path and returns the switch's previous value): `fn` on leaf copies of `inputs`
// in `type` (the first, q, as a strided view when `strided_first`), back-propagating
// `upstream`. Returns the output and each input's gradient, in that order, in float64.
inline std::vector<at::Tensor> run_on_path(const std::function<bool(bool)>& use_general_path, bool general,
                                           const std::vector<at::Tensor>& inputs,
                                           const std::function<at::Tensor(const std::vector<at::Tensor>&)>& fn,
                                           const at::Tensor& upstream, at::ScalarType type, bool strided_first) {
  const bool was = use_general_path(general);
  std::vector<at::Tensor> leaves;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    // Copies: a .to() of the same type would return the caller's tensor itself.
    at::Tensor x = i == 0 && strided_first ? inputs[i].transpose(-2, -1).contiguous().to(type).transpose(-2, -1)
                                           : inputs[i].to(type).clone();
    leaves.push_back(x.detach().requires_grad_(true));
  }
  const at::Tensor out = fn(leaves);
  out.backward(upstream.to(type));
  use_general_path(was);
  std::vector<at::Tensor> result{out.detach().to(at::kDouble)};
  for (const at::Tensor& x : leaves) result.push_back(x.grad().to(at::kDouble));
  return result;
}

// Dense attention over an explicit pattern in whatever dtype the inputs have: allowed is a
// bool tensor broadcastable to [B, H, Nq, Nk]. Rows with nothing allowed come out uniform
// (a finite fill keeps their zero upstream gradient from producing NaN).
inline at::Tensor dense_reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  const at::Tensor& allowed, double scale, const at::Tensor& bias = {}) {
  at::Tensor s = at::matmul(q, k.transpose(-2, -1)) * scale;
  if (bias.defined()) s = s + bias;
  s = s.masked_fill(allowed.logical_not(), -1e30);
  return at::matmul(at::softmax(s, -1), v);
}

// Checks the kernel in float32 against the reference in float64: the output on the rows
// where `query_keep` ([B, output rows] bool, or undefined: all rows) is true, and the
// gradients of q, k, v for a random upstream gradient that is zero on the other rows.
inline void expect_matches(const Kernel& kernel, const Kernel& reference, const at::Tensor& q, const at::Tensor& k,
                           const at::Tensor& v, const at::Tensor& query_keep = {},
                           double tolerance = kTolerance) {
  at::Tensor shape_probe;
  {
    at::NoGradGuard no_grad;
    shape_probe = reference(q, k, v);  // the output shape (pooling changes the row count)
  }
  const std::int64_t B = q.size(0), Nq = shape_probe.size(2);
  at::Tensor upstream = at::randn(shape_probe.sizes(), at::kDouble);
  at::Tensor row_keep = query_keep.defined() ? query_keep.to(at::kDouble).view({B, 1, Nq, 1})
                                             : at::ones({1}, at::kDouble);
  upstream = upstream * row_keep;
  const Outputs got = run(kernel, q, k, v, upstream, at::kFloat, test_device());
  const Outputs want = run(reference, q, k, v, upstream, at::kDouble);
  if (std::getenv("LRB_TEST_VERBOSE"))
    std::printf("rel errors: out %.3g dq %.3g dk %.3g dv %.3g\n", rel_error(got.out * row_keep, want.out * row_keep),
                rel_error(got.dq, want.dq), rel_error(got.dk, want.dk), rel_error(got.dv, want.dv));
  EXPECT_LT(rel_error(got.out * row_keep, want.out * row_keep), tolerance) << "output";
  EXPECT_LT(rel_error(got.dq, want.dq), tolerance) << "grad q";
  EXPECT_LT(rel_error(got.dk, want.dk), tolerance) << "grad k";
  EXPECT_LT(rel_error(got.dv, want.dv), tolerance) << "grad v";
  EXPECT_FALSE(got.out.isnan().any().item<bool>());
}

// Random q, k, v in float64 (fresh per call).
struct Qkv {
  at::Tensor q, k, v;
};
inline Qkv random_qkv(std::int64_t B, std::int64_t H, std::int64_t N, std::int64_t d, std::int64_t Nk = -1) {
  if (Nk < 0) Nk = N;
  return {at::randn({B, H, N, d}, at::kDouble), at::randn({B, H, Nk, d}, at::kDouble),
          at::randn({B, H, Nk, d}, at::kDouble)};
}

// [B, N] bool: batch element b keeps its first lengths[b] tokens.
inline at::Tensor length_mask(const std::vector<std::int64_t>& lengths, std::int64_t N) {
  at::Tensor m = at::zeros({static_cast<std::int64_t>(lengths.size()), N}, at::kBool);
  for (std::size_t b = 0; b < lengths.size(); ++b) m[b].narrow(0, 0, lengths[b]).fill_(true);
  return m;
}

// Key padding as a pattern [B, 1, 1, Nk].
inline at::Tensor key_pattern(const at::Tensor& mask) { return mask.view({mask.size(0), 1, 1, mask.size(1)}); }

}  // namespace lrb::test
