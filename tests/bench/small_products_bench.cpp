// The quickstart models' small products, each beside what it replaced, in the same run
// (one thread, as a quickstart rank runs):
//   products/batched_matmul vs products/at_matmul — lrb::batched_matmul (one BLAS call per
//       matrix) against at::matmul (LibTorch 1.13's CPU bmm: select + addmm per matrix
//       through the dispatcher), on the attention kernels' shapes: a full softmax's scores
//       and outputs (B*H = 128, N = 197, head 8) and a sparse kernel's query blocks (14
//       rows against 56 or 98 gathered keys, 1792 blocks). Only the blocked engine uses it:
//       in the Transformer's step the full softmax gained nothing measurable from it and
//       kept 2.3 MiB more (its saved operands are views into the packed q, k, v projection),
//       so softmax.cpp keeps at::matmul (docs/benchmarks.md).
//   maelre/reduction_conv vs maelre/reduction_product — MAELRE's strided convolution
//       (kernel 5, stride 2) forward + backward as a convolution and as the products
//       token_reduction.cpp uses on grids of up to 4 outputs, at each of the quickstart
//       MAELRE's four reductions (width 32 -> 512, grid 14 -> 1).
//
//   attention/softmax_fused vs attention/softmax_libtorch — the full softmax attention forward
//       + backward at the quickstart Transformer's shape (B = 32, H = 4, N = 197, head 8; at
//       heads of 16 and 32 for the record: the fused kernel takes heads of 8 only), the fused
//       small-head kernel (small_head_softmax.h) against LibTorch's products and softmax.
//
//   dropout/philox vs dropout/philox_one_block vs dropout/libtorch — dropout's forward +
//       backward at the quickstart's activation ([32, 197, 32], p = 0.1): lrb::dropout with
//       its blocks drawn eight at a time (philox_blocks.h), the same drawn one block at a time,
//       and LibTorch's at::dropout.
//
//   optimizer/adamw_fused vs optimizer/adamw_libtorch — one AdamW step over MAELRE-tiny's
//       kind of parameter shapes (7.8M floats in 64 tensors), lrb::FusedAdamW against LibTorch's.
//
//   norm/layer_norm_rows vs norm/layer_norm_libtorch — LayerNorm's forward at the quickstart
//       models' widths (B = 32: 196 tokens of 32, 49 of 64, 16 of 128, 4 of 256), lrb::layer_norm
//       (layer_norm.h) against at::layer_norm; range(1) = 1 adds the backward.
//
//   attention/softmax_sdpa (LibTorch 2.x only) — at::scaled_dot_product_attention at the same shape.
//
//   ./build/tests/lrb_bench --benchmark_filter='products|maelre|optimizer|attention/softmax_|dropout|norm/'
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <torch/version.h>
#include <torch/nn/modules/conv.h>

#include <cmath>

#include "suite/core/simd_level.h"
#include "suite/nn/batched_matmul.h"
#include "suite/nn/cpu/dropout.h"
#include "suite/nn/cpu/fused_adamw.h"
#include "suite/nn/cpu/layer_norm.h"
#include "suite/nn/cpu/philox_blocks.h"
#include "suite/nn/cpu/small_head_softmax.h"
#include "workloads/maelre/token_reduction.h"

namespace lrb {
namespace {

struct ProductShape {
  std::int64_t batch, m, k, n;
};
constexpr ProductShape kProducts[] = {{128, 197, 8, 197}, {128, 197, 197, 8}, {1792, 14, 8, 56},
                                      {1792, 14, 56, 8},  {1792, 14, 8, 98},  {1792, 14, 98, 8}};

template <bool Ours>
void Product(benchmark::State& state) {
  at::set_num_threads(1);
  const ProductShape s = kProducts[state.range(0)];
  at::manual_seed(0);
  const at::Tensor a = at::randn({s.batch, s.m, s.k}), b = at::randn({s.batch, s.k, s.n});
  for (auto _ : state) {
    const at::Tensor c = Ours ? batched_matmul(a, b) : at::matmul(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.SetLabel(std::to_string(s.batch) + " x (" + std::to_string(s.m) + "x" + std::to_string(s.k) + " . " +
                 std::to_string(s.k) + "x" + std::to_string(s.n) + ")");
  state.counters["flops_per_s"] = benchmark::Counter(2.0 * s.batch * s.m * s.k * s.n,
                                                     benchmark::Counter::kIsIterationInvariantRate);
}

struct ReductionShape {
  std::int64_t in, out, grid;
};
constexpr ReductionShape kReductions[] = {{32, 64, 14}, {64, 128, 7}, {128, 256, 4}, {256, 512, 2}};

template <bool AsProduct>
void Reduction(benchmark::State& state) {
  at::set_num_threads(1);
  const ReductionShape s = kReductions[state.range(0)];
  at::manual_seed(0);
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(s.in, s.out, 5).stride(2).padding(2));
  const at::Tensor x = at::randn({32, s.in, s.grid, s.grid}).requires_grad_(true);
  for (auto _ : state) {
    const at::Tensor y = AsProduct ? strided_conv_as_product(conv, x, 2) : conv->forward(x).flatten(2).transpose(1, 2);
    y.sum().backward();
    benchmark::DoNotOptimize(x.grad().data_ptr());
  }
  state.SetLabel(std::to_string(s.in) + "->" + std::to_string(s.out) + " at " + std::to_string(s.grid) + "x" +
                 std::to_string(s.grid));
}

struct NormShape {
  std::int64_t tokens, width;
};
constexpr NormShape kNorms[] = {{196, 32}, {49, 64}, {16, 128}, {4, 256}};

template <bool Rows>
void LayerNormStep(benchmark::State& state) {
  at::set_num_threads(1);
  const NormShape s = kNorms[state.range(0)];
  const bool backward = state.range(1) == 1;
  at::manual_seed(0);
  const at::Tensor x = at::randn({32, s.tokens, s.width}).requires_grad_(backward);
  const at::Tensor w = at::randn({s.width}).requires_grad_(backward), b = at::randn({s.width}).requires_grad_(backward);
  const at::Tensor grad = at::randn({32, s.tokens, s.width});
  for (auto _ : state) {
    const at::Tensor y = Rows ? lrb::layer_norm(x, w, b, 1e-5) : at::layer_norm(x, {s.width}, w, b, 1e-5);
    if (backward) y.backward(grad);
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetLabel("[32, " + std::to_string(s.tokens) + ", " + std::to_string(s.width) + "]" +
                 (backward ? " forward + backward" : " forward"));
}

template <bool Fused>
void AdamWStep(benchmark::State& state) {
  at::set_num_threads(1);
  at::manual_seed(0);
  // MAELRE-tiny's sizes, roughly: four stages of width 64..512, each a reduction kernel and
  // a few projections, and their biases (64 tensors, 7.8M parameters).
  std::vector<at::Tensor> params;
  for (const std::int64_t w : {64, 128, 256, 512})
    for (int i = 0; i < 8; ++i) {
      params.push_back(at::randn({w, i == 0 ? w / 2 * 25 : w * (i % 2 ? 1 : 2)}).requires_grad_(true));
      params.push_back(at::randn({w}).requires_grad_(true));
    }
  std::int64_t count = 0;
  for (auto& p : params) {
    p.mutable_grad() = at::randn_like(p);
    count += p.numel();
  }
  const auto o = torch::optim::AdamWOptions(1e-3).weight_decay(0.01);
  std::unique_ptr<torch::optim::Optimizer> opt;
  if (Fused)
    opt = std::make_unique<FusedAdamW>(params, o);
  else
    opt = std::make_unique<torch::optim::AdamW>(params, o);
  for (auto _ : state) opt->step();
  state.counters["parameters"] = static_cast<double>(count);
}

// Forward + backward of softmax(q k^T / sqrt(d)) v; range(0) is the head size. Through the
// fused small-head kernel, LibTorch's products and softmax, or (LibTorch 2.x) LibTorch's own
// fused attention, at::scaled_dot_product_attention: the path the fused kernel must beat on
// Debian 13 to keep its place (suite/nn/cpu/README.md).
enum class AttentionPath { fused, libtorch, sdpa };
template <AttentionPath Path>
void SmallHeadAttention(benchmark::State& state) {
  at::set_num_threads(1);
  at::manual_seed(0);
  const std::int64_t d = state.range(0);
  const at::Tensor q = at::randn({32, 4, 197, d}).requires_grad_(true), k = at::randn({32, 4, 197, d}).requires_grad_(true),
                   v = at::randn({32, 4, 197, d}).requires_grad_(true), grad = at::randn({32, 4, 197, d});
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  if (Path == AttentionPath::fused && !fused_softmax_applies(q, k, v)) {
    state.SkipWithError("the fused kernel takes heads of 8 only");
    return;
  }
  const auto attend = [&] {
    if (Path == AttentionPath::fused) return fused_softmax_attention(q, k, v, {}, scale, {});
#if TORCH_VERSION_MAJOR >= 2
    if (Path == AttentionPath::sdpa) return at::scaled_dot_product_attention(q, k, v);
#endif
    return at::matmul(at::softmax(at::matmul(q * scale, k.transpose(-2, -1)), -1), v);
  };
  for (auto _ : state) {
    const at::Tensor out = attend();
    out.backward(grad);
    benchmark::DoNotOptimize(q.grad().data_ptr());
  }
  // Useful FLOPs: q k^T and p v forward, four products of the same size backward.
  state.counters["flops_per_s"] =
      benchmark::Counter(6.0 * 2 * 32 * 4 * 197 * 197 * d, benchmark::Counter::kIsIterationInvariantRate);
}

enum class DropoutCode { philox, philox_one_block, libtorch };

template <DropoutCode Code>
void DropoutStep(benchmark::State& state) {
  at::set_num_threads(1);
  at::manual_seed(0);
  const at::Tensor x = at::randn({32, 197, 32}).requires_grad_(true), grad = at::randn({32, 197, 32});
  const ScopedSimdLevel level(Code == DropoutCode::philox_one_block ? SimdLevel::baseline : cpu_simd_level());
  for (auto _ : state) {
    const at::Tensor y = Code == DropoutCode::libtorch ? at::dropout(x, 0.1, true) : lrb::dropout(x, 0.1, true);
    y.backward(grad);
    benchmark::DoNotOptimize(x.grad().data_ptr());
  }
}

BENCHMARK(DropoutStep<DropoutCode::philox>)->Name("dropout/philox")->Unit(benchmark::kMillisecond);
BENCHMARK(DropoutStep<DropoutCode::philox_one_block>)->Name("dropout/philox_one_block")->Unit(benchmark::kMillisecond);
BENCHMARK(DropoutStep<DropoutCode::libtorch>)->Name("dropout/libtorch")->Unit(benchmark::kMillisecond);
BENCHMARK(SmallHeadAttention<AttentionPath::fused>)->Name("attention/softmax_fused")->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK(SmallHeadAttention<AttentionPath::libtorch>)->Name("attention/softmax_libtorch")->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMillisecond);
#if TORCH_VERSION_MAJOR >= 2
BENCHMARK(SmallHeadAttention<AttentionPath::sdpa>)->Name("attention/softmax_sdpa")->Arg(8)->Unit(benchmark::kMillisecond);
#endif
BENCHMARK(AdamWStep<true>)->Name("optimizer/adamw_fused")->Unit(benchmark::kMillisecond);
BENCHMARK(AdamWStep<false>)->Name("optimizer/adamw_libtorch")->Unit(benchmark::kMillisecond);
BENCHMARK(Product<true>)->Name("products/batched_matmul")->DenseRange(0, 5)->Unit(benchmark::kMillisecond);
BENCHMARK(Product<false>)->Name("products/at_matmul")->DenseRange(0, 5)->Unit(benchmark::kMillisecond);
BENCHMARK(Reduction<true>)->Name("maelre/reduction_product")->DenseRange(0, 3)->Unit(benchmark::kMillisecond);
BENCHMARK(Reduction<false>)->Name("maelre/reduction_conv")->DenseRange(0, 3)->Unit(benchmark::kMillisecond);
BENCHMARK(LayerNormStep<true>)->Name("norm/layer_norm_rows")->ArgsProduct({{0, 1, 2, 3}, {0, 1}})->Unit(benchmark::kMillisecond);
BENCHMARK(LayerNormStep<false>)->Name("norm/layer_norm_libtorch")->ArgsProduct({{0, 1, 2, 3}, {0, 1}})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lrb
