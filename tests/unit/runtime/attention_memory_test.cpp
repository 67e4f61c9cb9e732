// No N x N allocation on the sparse and linear paths: with the counting allocator, the peak
// of a forward + backward at N = 4096, d = 16 stays far below one N x N float32 tensor per
// (batch, head). Dense softmax is measured as well, to show the counter sees N x N.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>

#include "tests/support/attention_test_util.h"
#include "suite/nn/attention/block_sparse.h"
#include "suite/nn/attention/linear.h"
#include "suite/nn/attention/pooling.h"
#include "suite/nn/attention/retention.h"
#include "suite/nn/attention/sliding_window.h"
#include "suite/nn/attention/softmax.h"
#include "suite/runtime/counting_allocator.h"

namespace lrb {
namespace {

constexpr std::int64_t kB = 1, kH = 2, kN = 4096, kD = 16;
constexpr std::int64_t kScoreBytes = kB * kH * kN * kN * 4;  // one N x N float32 per (batch, head)

using Fn = std::function<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>;

std::int64_t peak_of(const Fn& fn) {
  CpuMemoryCounter::install();
  at::Tensor q = at::randn({kB, kH, kN, kD}).requires_grad_(true);
  at::Tensor k = at::randn({kB, kH, kN, kD}).requires_grad_(true);
  at::Tensor v = at::randn({kB, kH, kN, kD}).requires_grad_(true);
  const at::Tensor upstream = at::randn({kB, kH, kN, kD});
  PeakScope scope;
  fn(q, k, v).backward(upstream);
  const std::int64_t peak = scope.peak_above_base();
  if (std::getenv("LRB_TEST_VERBOSE")) std::printf("peak %.2f MiB (N x N: %.0f MiB)\n", peak / 1048576.0, kScoreBytes / 1048576.0);
  return peak;
}

TEST(AttentionMemory, CounterSeesTheDenseScores) {
  EXPECT_GT(peak_of([](auto& q, auto& k, auto& v) { return softmax_attention(q, k, v); }), kScoreBytes);
}

TEST(AttentionMemory, SparseAndLinearPathsAllocateNoNByN) {
  const at::Tensor mask = at::ones({kB, kN}, at::kBool);
  SlidingWindowOptions sw;
  sw.window = 256;
  EXPECT_LT(peak_of([&](auto& q, auto& k, auto& v) {
              return sliding_window_attention(q, k, v, sw, mask, at::tensor(std::vector<std::int64_t>{0, 100, kN - 1}, at::kLong));
            }),
            kScoreBytes / 8)
      << "sliding window";
  EXPECT_LT(peak_of([&](auto& q, auto& k, auto& v) { return block_sparse_attention(q, k, v, {}, mask).out; }),
            kScoreBytes / 8)
      << "block sparse";
  EXPECT_LT(peak_of([&](auto& q, auto& k, auto& v) { return linear_attention(q, k, v, {}, mask); }),
            kScoreBytes / 8)
      << "linear";
  EXPECT_LT(peak_of([&](auto& q, auto& k, auto& v) { return chunked_softmax_attention(q, k, v, mask, 64); }),
            kScoreBytes / 8)
      << "chunked softmax";
  EXPECT_LT(peak_of([&](auto& q, auto& k, auto& v) { return retention_chunkwise(q, k, v, mask, 64); }),
            kScoreBytes / 8)
      << "retention chunkwise";
}

TEST(AttentionMemory, PoolingConvRunsUnderTheCounter) {
  // MKL-DNN convolution allocates through Allocator::raw_allocate; the counter must allow it
  // and account for it.
  CpuMemoryCounter::install();
  PoolingAttentionOptions o;
  o.heads = 2;
  o.head_dim = 16;
  o.grid = {32, 32};
  o.stride_q = {2};
  o.stride_kv = {4};
  PoolingAttention module(o);
  const std::int64_t live = CpuMemoryCounter::live_bytes();
  {
    at::Tensor q = at::randn({2, 2, 1024, 16}).requires_grad_(true);
    at::Tensor k = at::randn({2, 2, 1024, 16}).requires_grad_(true);
    at::Tensor v = at::randn({2, 2, 1024, 16}).requires_grad_(true);
    PeakScope scope;
    module.forward(q, k, v).out.sum().backward();
    EXPECT_GT(scope.peak_above_base(), 3 * 2 * 2 * 1024 * 16 * 4);
  }
  module.zero_grad(/*set_to_none=*/true);
  EXPECT_EQ(CpuMemoryCounter::live_bytes(), live);
}

}  // namespace
}  // namespace lrb
