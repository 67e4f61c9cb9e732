// Fp32CpuConvScope: under CPU bf16 autocast, on every LibTorch release, a convolution in the
// scope runs in fp32 (LibTorch's bf16 CPU convolutions now and then return non-finite weight
// gradients: suite/nn/fp32_cpu_conv.h), one beside it in bf16; without autocast it does nothing.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "suite/nn/fp32_cpu_conv.h"
#include "suite/runtime/precision.h"

namespace lrb {
namespace {

TEST(Fp32CpuConv, UnderCpuAutocastTheConvolutionInTheScopeRunsInFp32) {
  const at::Tensor w = at::randn({4, 3, 3}).requires_grad_(true);
  const at::Tensor x0 = at::randn({2, 3, 8});
  const AutocastScope autocast("bf16", at::Device(at::kCPU));
  EXPECT_EQ(at::conv1d(x0, w, {}, 2, 1).scalar_type(), at::kBFloat16) << "outside the scope autocast runs it in bf16";
  at::Tensor x = x0.to(at::kBFloat16);
  at::Tensor y;
  {
    const Fp32CpuConvScope scope(x);
    EXPECT_TRUE(scope.active());
    EXPECT_EQ(x.scalar_type(), at::kFloat);
    y = at::conv1d(x, w, {}, 2, 1);
  }
  EXPECT_EQ(y.scalar_type(), at::kFloat);
  y.sum().backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().scalar_type(), at::kFloat);
}

TEST(Fp32CpuConv, WithoutAutocastTheScopeChangesNothing) {
  at::Tensor x = at::randn({2, 3, 8}, at::kDouble);
  const Fp32CpuConvScope scope(x);
  EXPECT_FALSE(scope.active());
  EXPECT_EQ(x.scalar_type(), at::kDouble);
}

}  // namespace
}  // namespace lrb
