// Data generation throughput of every generator at its default length, and the time to
// load Fashion-MNIST. One intra-op thread, so figures compare across machines of a kind;
// generators parallelise over samples when the runner gives them threads.
//
//   ./build/tests/lrb_bench --benchmark_filter='Generate|Fashion'
#include <benchmark/benchmark.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "suite/registry/registry.h"
#include "suite/run/task.h"
#include "workloads/loaders/idx.h"

namespace lrb {
namespace {

// Builds the task with defaults plus `overrides`, as the sweep expansion does.
std::unique_ptr<Task> make(const std::string& name, const json& overrides, std::int64_t seq_len) {
  const TaskEntry* e = TaskRegistry::instance().find(name);
  json o = json::object();
  for (const auto& spec : e->schema.options) o[spec.name] = spec.default_value;
  for (const auto& [k, v] : overrides.items()) o[k] = v;
  e->schema.resolve(o, json{{"seq_len", seq_len}});
  return e->make(o, seq_len);
}

void generate(benchmark::State& state, const std::string& name, std::int64_t seq_len, std::int64_t n) {
  at::set_num_threads(1);
  const auto task = make(name, {{"train_size", n}}, seq_len);
  DataRequest r;
  r.eval_size = 0;
  for (auto _ : state) {
    r.seed = static_cast<std::uint64_t>(state.iterations());
    benchmark::DoNotOptimize(task->generate(r));
  }
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(n * state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(name + (seq_len ? " seq_len " + std::to_string(seq_len) : ""));
}

// Default lengths: LRA's for ListOps (2000); MosquitoSound's series (3750); 4096 tokens
// for retrieval and documents; fixed images and spectrograms by their own options.
void BM_GenerateListOps(benchmark::State& s) { generate(s, "listops", 2000, 100); }
void BM_GeneratePathfinder(benchmark::State& s) { generate(s, "pathfinder", 0, 500); }
void BM_GeneratePathX(benchmark::State& s) { generate(s, "pathx", 0, 200); }
void BM_GenerateWingbeat(benchmark::State& s) { generate(s, "wingbeat", 3750, 200); }
void BM_GenerateAudio(benchmark::State& s) { generate(s, "audio", 0, 64); }
void BM_GenerateRetrieval(benchmark::State& s) { generate(s, "retrieval", 4096, 500); }
void BM_GenerateMultilabelDocs(benchmark::State& s) { generate(s, "multilabel-docs", 4096, 200); }
BENCHMARK(BM_GenerateListOps)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GeneratePathfinder)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GeneratePathX)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GenerateWingbeat)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GenerateAudio)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GenerateRetrieval)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GenerateMultilabelDocs)->Unit(benchmark::kMillisecond);

constexpr const char* kFashion = "/usr/share/datasets/fashion-mnist/";

// Reading and decompressing the four idx.gz files (no cache).
void BM_FashionMnistLoad(benchmark::State& state) {
  for (auto _ : state)
    for (const char* f : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                          "t10k-labels-idx1-ubyte.gz"})
      benchmark::DoNotOptimize(read_idx(std::string(kFashion) + f));
}
BENCHMARK(BM_FashionMnistLoad)->Unit(benchmark::kMillisecond);

// A full task split (60,000 training images as a float grid + 512 eval), files cached.
void BM_FashionMnistGenerate(benchmark::State& state) {
  at::set_num_threads(1);
  const auto task = make("fashion-mnist", json::object(), 0);
  DataRequest r;
  r.eval_size = 512;
  benchmark::DoNotOptimize(task->generate(r));  // warm the file cache
  for (auto _ : state) benchmark::DoNotOptimize(task->generate(r));
  state.counters["samples/s"] = benchmark::Counter(60512.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FashionMnistGenerate)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lrb
