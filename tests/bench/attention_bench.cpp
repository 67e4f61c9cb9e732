// Attention kernels, forward + backward, B=1, H=4, d=64, N = 1K..16K (the O(N^2) kernels
// stop at 8K, about 8 GB). Counters per run:
//   peak_bytes      peak CPU bytes above the inputs during one forward + backward (the
//                   counting allocator, max over iterations)
//   score_elements  query-key scores the kernel computes (its analytic count)
//   useful_flops    the FLOPs of one forward + backward that the attention needs, counted
//                   as a dense kernel of the same pattern would (a backward is twice the
//                   forward): 12·keys·d per head, keys the query-key pairs the pattern
//                   attends (a window of one-sided width w: N(2w+1) − w(w+1)); a linear
//                   kernel 12·N·d² per head; computed-but-masked or padded scores never count
// roofline/matmul/2048 is the reference: a float32 2048³ product on the same one thread,
// so that each kernel's FLOP rate is a share of it measured in the same run
// (scripts/bench_table.py prints the "% of matmul" table; docs/benchmarks.md).
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
#include "suite/nn/attention/tala.h"
#include "suite/nn/cpu/tala_band.h"
#include "suite/runtime/counting_allocator.h"

namespace lrb {
namespace {

constexpr std::int64_t kB = 1, kH = 4, kD = 64;

using Kernel = std::function<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>;

void run(benchmark::State& state, const Kernel& kernel, std::int64_t score_elements, double useful_flops = 0) {
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
  if (useful_flops > 0) {
    state.counters["useful_flops"] = useful_flops;
    state.counters["flops_per_s"] = benchmark::Counter(useful_flops, benchmark::Counter::kIsIterationInvariantRate);
  }
}

// Useful FLOPs of one forward + backward over `pairs` attended query-key pairs (per head):
// the scores QK^T and the product with V, 4·pairs·d forward, twice that backward.
double pair_flops(double pairs) { return 12.0 * pairs * static_cast<double>(kD) * static_cast<double>(kB * kH); }

// Query-key pairs of a sliding window of one-sided width w over N tokens.
double window_pairs(std::int64_t n, std::int64_t w) {
  w = std::min(w, n - 1);
  return static_cast<double>(n) * static_cast<double>(2 * w + 1) - static_cast<double>(w) * static_cast<double>(w + 1);
}

void Softmax(benchmark::State& s) {
  const double n = static_cast<double>(s.range(0));
  run(s, [](auto& q, auto& k, auto& v) { return softmax_attention(q, k, v); },
      softmax_score_elements(kB, kH, s.range(0), s.range(0)), pair_flops(n * n));
}

void SoftmaxChunked(benchmark::State& s) {
  const std::int64_t chunk = 256;
  const double n = static_cast<double>(s.range(0));
  run(s, [&](auto& q, auto& k, auto& v) { return chunked_softmax_attention(q, k, v, {}, chunk); },
      chunked_softmax_score_elements(kB, kH, s.range(0), s.range(0), chunk), pair_flops(n * n));
}

void Linear(benchmark::State& s) {
  // psi(K)^T V and psi(Q) S: 4·N·d² forward per head (the normaliser's N·d terms left out).
  const double n = static_cast<double>(s.range(0));
  run(s, [](auto& q, auto& k, auto& v) { return linear_attention(q, k, v); }, linear_score_elements(),
      12.0 * n * kD * kD * kB * kH);
}

void SlidingWindow(benchmark::State& s) {
  SlidingWindowOptions o;  // w = 256, b = 64
  run(s, [&](auto& q, auto& k, auto& v) { return sliding_window_attention(q, k, v, o); },
      sliding_window_score_elements(kB, kH, s.range(0), o), pair_flops(window_pairs(s.range(0), o.window)));
}

void SlidingWindowGlobal(benchmark::State& s) {
  SlidingWindowOptions o;  // w = 256 and one global (CLS) token
  const at::Tensor cls = at::zeros({1}, at::kLong);
  run(s, [&](auto& q, auto& k, auto& v) { return sliding_window_attention(q, k, v, o, {}, cls); },
      sliding_window_score_elements(kB, kH, s.range(0), o, 1));
}

void BlockSparse(benchmark::State& s) {
  BlockSparseOptions o;  // b = 64, r = 3
  // Every score of BigBird's pattern (window, global and random blocks) is attended.
  run(s, [&](auto& q, auto& k, auto& v) { return block_sparse_attention(q, k, v, o).out; },
      block_sparse_score_elements(kB, kH, s.range(0), o),
      pair_flops(static_cast<double>(block_sparse_score_elements(1, 1, s.range(0), o))));
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
  const double n = static_cast<double>(s.range(0));  // causal: N(N+1)/2 pairs
  run(s, [](auto& q, auto& k, auto& v) { return retention_parallel(q, k, v); },
      retention_score_elements(RetentionForm::Parallel, kB, kH, s.range(0)), pair_flops(n * (n + 1) / 2));
}

void RetentionRecurrent(benchmark::State& s) {
  const double n = static_cast<double>(s.range(0));  // the state: q·S and k^T v, 4·d² a token
  run(s, [](auto& q, auto& k, auto& v) { return retention_recurrent(q, k, v); },
      retention_score_elements(RetentionForm::Recurrent, kB, kH, s.range(0)), 12.0 * n * kD * kD * kB * kH);
}

void RetentionChunkwise(benchmark::State& s) {
  // Within a chunk of C the causal half of the scores (N·C/2 pairs, with their product
  // with V), across chunks the state: Q·S and K^T V, 4·N·d² forward per head.
  const double n = static_cast<double>(s.range(0)), c = 64;
  run(s, [](auto& q, auto& k, auto& v) { return retention_chunkwise(q, k, v, {}, 64); },
      retention_score_elements(RetentionForm::Chunkwise, kB, kH, s.range(0), 64),
      pair_flops(n * (c + 1) / 2) + 12.0 * n * kD * kD * kB * kH);
}

void TalaChunkwise(benchmark::State& s) {
  // MixFormer's TALA with its relative bias (w = 8, the kernel's default window), chunkwise
  // (C = 64): retention's chunkwise form weighted by g(w), and the band of each query's w
  // nearest keys weighted by g(delta) - g(w). Useful: retention's chunkwise count plus the
  // band's pairs (0 <= n - m < w: N·w − w(w−1)/2), which the bias gives weights of their own.
  const std::int64_t w = 8;
  const double n = static_cast<double>(s.range(0)), c = 64;
  TalaOptions o;
  o.form = TalaForm::Chunkwise;
  o.bias = TalaBias::Relative;
  o.chunk = 64;
  const at::Tensor bias = tala_random_bias(TalaBias::Relative, kH, s.range(0), w, 0.5, 0);
  run(s, [&](auto& q, auto& k, auto& v) { return tala(o, q, k, v, {}, {}, bias); },
      tala_score_elements(o, kB, kH, s.range(0), w, /*fused_band=*/true),
      pair_flops(n * (c + 1) / 2 + static_cast<double>(tala_band_fused_score_elements(1, 1, s.range(0), w))) +
          12.0 * n * kD * kD * kB * kH);
}

// The reference every kernel's FLOP rate is a share of: a float32 n×n by n×n product on the
// same one thread (the matmul peak of suite/run/matmul_peak.h, measured beside the kernels).
void MatmulReference(benchmark::State& state) {
  at::set_num_threads(1);
  const std::int64_t n = state.range(0);
  at::manual_seed(0);
  const at::Tensor a = at::randn({n, n}), b = at::randn({n, n});
  at::Tensor c = at::empty({n, n});
  for (auto _ : state) {
    at::mm_out(c, a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  state.counters["N"] = static_cast<double>(n);
  state.counters["useful_flops"] = flops;
  state.counters["flops_per_s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

// Warm-up first: a kernel whose first iteration passes the minimum time (0.5 s) was
// measured on that one cold iteration alone, its tensors' first page faults included.
void warmed(benchmark::internal::Benchmark* b) { b->MinWarmUpTime(0.1)->Unit(benchmark::kMillisecond)->UseRealTime(); }

void up_to(benchmark::internal::Benchmark* b, std::int64_t max_n) {
  for (std::int64_t n = 1024; n <= max_n; n *= 2) b->Arg(n);
  warmed(b);
}
void all_lengths(benchmark::internal::Benchmark* b) { up_to(b, 16384); }
void quadratic_lengths(benchmark::internal::Benchmark* b) { up_to(b, 8192); }

BENCHMARK(MatmulReference)->Name("roofline/matmul")->Arg(2048)->Apply(warmed);
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
BENCHMARK(TalaChunkwise)->Name("attention/tala_chunkwise")->Apply(all_lengths);

}  // namespace
}  // namespace lrb
