// Each CPU fast path with a switch to its reference (suite/nn/cpu/README.md), against that
// reference in the same run: forward + backward, one thread, B = 1, H = 4, d = 64, N = 4096
// (the chunked softmax 2048). fast_path/<path>/fused and fast_path/<path>/reference; the
// ratio of the two is what decides whether the fast path still earns its code, on each
// LibTorch release (docs/benchmarks.md, "The CPU fast paths on both LibTorch releases").
// The fast paths without a switch are timed against LibTorch in small_products_bench.cpp
// (attention/softmax_*, dropout/*, optimizer/*, norm/*).
//
//   ./build/tests/lrb_bench --benchmark_filter=fast_path/ --benchmark_repetitions=3
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <functional>

#include "suite/nn/attention/linear.h"
#include "suite/nn/attention/retention.h"
#include "suite/nn/attention/softmax.h"
#include "suite/nn/attention/tala.h"
#include "suite/nn/cpu/linear_fused.h"
#include "suite/nn/cpu/retention_chunks.h"
#include "suite/nn/cpu/softmax_rows.h"
#include "suite/nn/cpu/tala_band.h"

namespace lrb {
namespace {

constexpr std::int64_t kB = 1, kH = 4, kD = 64;

using Kernel = std::function<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>;
using Switch = bool (*)(bool);

void run(benchmark::State& state, const Kernel& kernel, Switch use_general_path, bool reference, std::int64_t n) {
  at::set_num_threads(1);
  at::manual_seed(0);
  at::Tensor q = at::randn({kB, kH, n, kD}).requires_grad_(true);
  at::Tensor k = at::randn({kB, kH, n, kD}).requires_grad_(true);
  at::Tensor v = at::randn({kB, kH, n, kD}).requires_grad_(true);
  const at::Tensor upstream = at::randn({kB, kH, n, kD});
  const bool before = use_general_path(reference);
  for (auto _ : state) {
    for (auto* t : {&q, &k, &v}) t->mutable_grad().reset();
    const at::Tensor out = kernel(q, k, v);
    out.backward(upstream.narrow(2, 0, out.size(2)));
    benchmark::DoNotOptimize(q.grad().data_ptr());
  }
  use_general_path(before);
}

template <bool Reference>
void Linear(benchmark::State& s) {
  run(s, [](auto& q, auto& k, auto& v) { return linear_attention(q, k, v); }, linear_attention_use_general_path,
      Reference, 4096);
}

template <bool Reference>
void SoftmaxRows(benchmark::State& s) {
  run(s, [](auto& q, auto& k, auto& v) { return chunked_softmax_attention(q, k, v, {}, 256); },
      softmax_rows_use_general_path, Reference, 2048);
}

template <bool Reference>
void RetentionChunks(benchmark::State& s) {
  run(s, [](auto& q, auto& k, auto& v) { return retention_chunkwise(q, k, v, {}, 64); },
      retention_chunks_use_general_path, Reference, 4096);
}

template <bool Reference>
void TalaBand(benchmark::State& s) {
  TalaOptions o;
  o.form = TalaForm::Chunkwise;
  o.bias = TalaBias::Relative;
  o.chunk = 64;
  const at::Tensor bias = tala_random_bias(TalaBias::Relative, kH, 4096, 8, 0.5, 0);
  run(s, [&](auto& q, auto& k, auto& v) { return tala(o, q, k, v, {}, {}, bias); }, tala_band_use_general_path,
      Reference, 4096);
}

void timed(benchmark::internal::Benchmark* b) { b->MinWarmUpTime(0.1)->Unit(benchmark::kMillisecond)->UseRealTime(); }

BENCHMARK(Linear<false>)->Name("fast_path/linear_fused/fused")->Apply(timed);
BENCHMARK(Linear<true>)->Name("fast_path/linear_fused/reference")->Apply(timed);
BENCHMARK(SoftmaxRows<false>)->Name("fast_path/softmax_rows/fused")->Apply(timed);
BENCHMARK(SoftmaxRows<true>)->Name("fast_path/softmax_rows/reference")->Apply(timed);
BENCHMARK(RetentionChunks<false>)->Name("fast_path/retention_chunks/fused")->Apply(timed);
BENCHMARK(RetentionChunks<true>)->Name("fast_path/retention_chunks/reference")->Apply(timed);
BENCHMARK(TalaBand<false>)->Name("fast_path/tala_band/fused")->Apply(timed);
BENCHMARK(TalaBand<true>)->Name("fast_path/tala_band/reference")->Apply(timed);

}  // namespace
}  // namespace lrb
