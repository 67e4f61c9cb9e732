// Attention kernels, forward + backward, B=1, H=4, d=64, N = 1K..16K (the O(N^2) kernels
// stop at 8K, about 8 GB). Counters per run:
//   peak_bytes      peak CPU bytes above the inputs during one forward + backward (the
//                   counting allocator, max over iterations)
//   score_elements  query-key scores the kernel computes (its analytic count)
// Threads: at::set_num_threads(1), so the numbers are stable on a shared 2-core machine
// and compare kernels rather than their parallel scaling.
//
//   ./build/tests/lrb_bench --benchmark_filter=attention --benchmark_format=json > bench.json
//   /usr/bin/python3 scripts/bench_table.py bench.json
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>

#include "suite/nn/attention/block_sparse.h"
#include "suite/nn/attention/linear.h"
#include "suite/nn/attention/pooling.h"
#include "suite/nn/attention/proportional.h"
#include "suite/nn/attention/retention.h"
#include "suite/nn/attention/sliding_window.h"
#include "suite/nn/attention/softmax.h"
#include "suite/runtime/counting_allocator.h"

namespace lrb {
namespace {

constexpr std::int64_t kB = 1, kH = 4, kD = 64;

using Kernel = std::function<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>;

void run(benchmark::State& state, const Kernel& kernel, std::int64_t score_elements) {
  at::set_num_threads(1);
  CpuMemoryCounter::install();  // before any tensor, so every allocation is counted
  const std::int64_t N = state.range(0);
  at::manual_seed(0);
  at::Tensor q = at::randn({kB, kH, N, kD}).requires_grad_(true);
  at::Tensor k = at::randn({kB, kH, N, kD}).requires_grad_(true);
  at::Tensor v = at::randn({kB, kH, N, kD}).requires_grad_(true);
  const at::Tensor upstream = at::randn({kB, kH, N, kD});
  std::int64_t peak = 0;
  for (auto _ : state) {
    for (auto* t : {&q, &k, &v}) t->mutable_grad().reset();  // every iteration allocates its grads
    PeakScope scope;
    const at::Tensor out = kernel(q, k, v);
    out.backward(upstream.narrow(2, 0, out.size(2)));
    peak = std::max(peak, scope.peak_above_base());
    benchmark::DoNotOptimize(q.grad().data_ptr());
  }
  state.counters["peak_bytes"] = static_cast<double>(peak);
  state.counters["score_elements"] = static_cast<double>(score_elements);
  state.counters["N"] = static_cast<double>(N);
}

void Softmax(benchmark::State& s) {
  run(s, [](auto& q, auto& k, auto& v) { return softmax_attention(q, k, v); },
      softmax_score_elements(kB, kH, s.range(0), s.range(0)));
}

void SoftmaxChunked(benchmark::State& s) {
  const std::int64_t chunk = 256;
  run(s, [&](auto& q, auto& k, auto& v) { return chunked_softmax_attention(q, k, v, {}, chunk); },
      chunked_softmax_score_elements(kB, kH, s.range(0), s.range(0), chunk));
}

void Linear(benchmark::State& s) {
  run(s, [](auto& q, auto& k, auto& v) { return linear_attention(q, k, v); }, linear_score_elements());
}

void SlidingWindow(benchmark::State& s) {
  SlidingWindowOptions o;  // w = 256, b = 64
  run(s, [&](auto& q, auto& k, auto& v) { return sliding_window_attention(q, k, v, o); },
      sliding_window_score_elements(kB, kH, s.range(0), o));
}

void SlidingWindowGlobal(benchmark::State& s) {
  SlidingWindowOptions o;  // w = 256 and one global (CLS) token
  const at::Tensor cls = at::zeros({1}, at::kLong);
  run(s, [&](auto& q, auto& k, auto& v) { return sliding_window_attention(q, k, v, o, {}, cls); },
      sliding_window_score_elements(kB, kH, s.range(0), o, 1));
}

void BlockSparse(benchmark::State& s) {
  BlockSparseOptions o;  // b = 64, r = 3
  run(s, [&](auto& q, auto& k, auto& v) { return block_sparse_attention(q, k, v, o).out; },
      block_sparse_score_elements(kB, kH, s.range(0), o));
}

void Pooling(benchmark::State& s) {
  // MViT on a 1-D grid: conv pooling, k/v stride 4 (MViT v2's first-stage KV stride).
  PoolingAttentionOptions o;
  o.heads = kH;
  o.head_dim = kD;
  o.grid = {s.range(0)};
  o.stride_kv = {4};
  PoolingAttention module(o);
  run(s, [&](auto& q, auto& k, auto& v) { return module.forward(q, k, v).out; }, module.score_elements(kB));
}

void Proportional(benchmark::State& s) {
  const at::Tensor sizes = at::randint(1, 5, {kB, s.range(0)}).to(at::kFloat);
  run(s, [&](auto& q, auto& k, auto& v) { return proportional_attention(q, k, v, sizes); },
      softmax_score_elements(kB, kH, s.range(0), s.range(0)));
}

void RetentionParallel(benchmark::State& s) {
  run(s, [](auto& q, auto& k, auto& v) { return retention_parallel(q, k, v); },
      retention_score_elements(RetentionForm::Parallel, kB, kH, s.range(0)));
}

void RetentionRecurrent(benchmark::State& s) {
  run(s, [](auto& q, auto& k, auto& v) { return retention_recurrent(q, k, v); },
      retention_score_elements(RetentionForm::Recurrent, kB, kH, s.range(0)));
}

void RetentionChunkwise(benchmark::State& s) {
  run(s, [](auto& q, auto& k, auto& v) { return retention_chunkwise(q, k, v, {}, 64); },
      retention_score_elements(RetentionForm::Chunkwise, kB, kH, s.range(0), 64));
}

void up_to(benchmark::internal::Benchmark* b, std::int64_t max_n) {
  for (std::int64_t n = 1024; n <= max_n; n *= 2) b->Arg(n);
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
void all_lengths(benchmark::internal::Benchmark* b) { up_to(b, 16384); }
void quadratic_lengths(benchmark::internal::Benchmark* b) { up_to(b, 8192); }

BENCHMARK(Softmax)->Name("attention/softmax")->Apply(quadratic_lengths);
BENCHMARK(SoftmaxChunked)->Name("attention/softmax_chunked")->Apply(all_lengths);
BENCHMARK(Linear)->Name("attention/linear")->Apply(all_lengths);
BENCHMARK(SlidingWindow)->Name("attention/sliding_window")->Apply(all_lengths);
BENCHMARK(SlidingWindowGlobal)->Name("attention/sliding_window_global")->Apply(all_lengths);
BENCHMARK(BlockSparse)->Name("attention/block_sparse")->Apply(all_lengths);
BENCHMARK(Pooling)->Name("attention/pooling_kv4")->Apply(all_lengths);
BENCHMARK(Proportional)->Name("attention/proportional")->Apply(quadratic_lengths);
BENCHMARK(RetentionParallel)->Name("attention/retention_parallel")->Apply(quadratic_lengths);
BENCHMARK(RetentionRecurrent)->Name("attention/retention_recurrent")->Apply(all_lengths);
BENCHMARK(RetentionChunkwise)->Name("attention/retention_chunkwise")->Apply(all_lengths);

}  // namespace
}  // namespace lrb
