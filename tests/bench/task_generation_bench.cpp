// Data generation throughput of every generator at its default length, the time to load
// Fashion-MNIST, and the time to read task data back from the disk cache
// (suite/run/data_cache.h). One intra-op thread, so figures compare across machines of a
// kind; generators parallelise over samples when the runner gives them threads.
//
//   ./build/tests/lrb_bench --benchmark_filter='Generate|Fashion'
#include <benchmark/benchmark.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <unistd.h>

#include <filesystem>

#include "suite/registry/registry.h"
#include "suite/run/data_cache.h"
#include "suite/contracts/task.h"
#include "workloads/loaders/idx.h"

namespace lrb {
namespace {

// Defaults plus `overrides`, resolved, as the sweep expansion does.
json options(const std::string& name, const json& overrides, std::int64_t seq_len) {
  const TaskEntry* e = TaskRegistry::instance().find(name);
  json o = json::object();
  for (const auto& spec : e->schema.options) o[spec.name] = spec.default_value;
  for (const auto& [k, v] : overrides.items()) o[k] = v;
  e->schema.resolve(o, json{{"seq_len", seq_len}});
  return o;
}

std::unique_ptr<Task> make(const std::string& name, const json& overrides, std::int64_t seq_len) {
  return TaskRegistry::instance().find(name)->make(options(name, overrides, seq_len), seq_len);
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

// Reading a run's data back from the disk cache (a hit, the in-memory layer cleared each
// time): the cost every run after the first pays for its data.
void cache_hit(benchmark::State& state, const std::string& name, const json& overrides, std::int64_t seq_len,
               std::int64_t eval_size) {
  at::set_num_threads(1);
  const TaskEntry& e = *TaskRegistry::instance().find(name);
  const json o = options(name, overrides, seq_len);
  const TaskInfo info = e.describe(o, seq_len);
  const std::int64_t L = e.uses_seq_len ? seq_len : info.tokens();
  const auto folder = std::filesystem::temp_directory_path() / ("lrb-bench-cache-" + std::to_string(::getpid()));
  const DataRequest r{1, eval_size};
  clear_task_data_cache();
  cached_task_data(e, o, L, info, r, folder);  // generate and store once
  double samples = 0, bytes = 0;
  for (auto _ : state) {
    clear_task_data_cache();
    const CachedTaskData d = cached_task_data(e, o, L, info, r, folder);
    if (d.source.result != "hit") state.SkipWithError(("not a cache hit: " + d.source.result).c_str());
    samples = static_cast<double>(d.data->train.size() + d.data->eval.size());
    bytes = static_cast<double>(d.data->train.x.nbytes() + d.data->train.y.nbytes() + d.data->eval.x.nbytes() +
                                d.data->eval.y.nbytes());
  }
  clear_task_data_cache();
  std::filesystem::remove_all(folder);
  state.counters["samples/s"] = benchmark::Counter(samples * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["MiB"] = bytes / (1 << 20);
  state.SetLabel(name + " from the disk cache");
}

void BM_CacheHitListOps(benchmark::State& s) { cache_hit(s, "listops", {{"train_size", 2000}}, 2000, 512); }
void BM_CacheHitFashionMnist(benchmark::State& s) { cache_hit(s, "fashion-mnist", json::object(), 0, 512); }
BENCHMARK(BM_CacheHitListOps)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CacheHitFashionMnist)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lrb
