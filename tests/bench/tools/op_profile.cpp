// Where a model's training step goes, op by op: LibTorch's profiler over a few steps of
// forward, cross-entropy, backward and lrbench's AdamW, each op's self time (its time less
// the ops it called) per step, and its calls per step. This is how the per-matrix dispatch
// of LibTorch 1.13's CPU bmm (about 9,000 dispatches a step in mViT v2 and MAELRE) was
// found (docs/benchmarks.md, "Where the quickstart's steps went").
//
//   lrb_op_profile MODEL ['{"dim": 32, ...}'] [--grid 1,28,28] [--classes 10] [--batch 32]
//                  [--steps 10] [--warmup 5] [--threads 1] [--top 25] [--shapes]
//
// The options are the model's, as in a sweep file's [[model]] table (unknown ones are an
// error); the input is a random image batch of the grid's shape (channels, height, width),
// as the quickstart's Fashion-MNIST. What the profiler does not see (the forward of
// lrbench's fused kernels, which are custom autograd functions, and the code between ops)
// is the line "not in any op": the step's wall time less the ops' self times. --shapes lists
// each op once per combination of input shapes, to tell which call of an op costs. The
// steps run once without the profiler, then with it: the first line gives both step times.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/CPUAllocator.h>
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/nn/functional/loss.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "suite/contracts/model.h"
#include "suite/core/errors.h"
#include "suite/nn/cpu/fused_adamw.h"
#include "suite/registry/registry.h"
#include "suite/runtime/counting_allocator.h"
#include "suite/runtime/torch_compat.h"

namespace {

struct OpTime {
  double self_us = 0;
  std::int64_t calls = 0;
};

std::string shape_text(const std::vector<std::vector<std::int64_t>>& shapes) {
  std::string out;
  for (const auto& s : shapes) out += (out.empty() ? "" : ", ") + fmt::format("[{}]", fmt::join(s, ", "));
  return out;
}

// Self time per op name (with its input shapes, when asked) from the legacy profiler's
// push/pop ranges, thread by thread.
std::map<std::string, OpTime> self_times(const torch::autograd::profiler::thread_event_lists& lists,
                                         bool by_shape) {
  using torch::autograd::profiler::EventKind;
  using torch::autograd::profiler::LegacyEvent;
  std::map<std::string, OpTime> out;
  for (const auto& events : lists) {
    struct Open {
      const LegacyEvent* push;
      double children_us;
    };
    std::vector<Open> stack;
    for (const LegacyEvent& e : events) {
      if (e.kind() == EventKind::PushRange) {
        stack.push_back({&e, 0.0});
      } else if (e.kind() == EventKind::PopRange && !stack.empty()) {
        const Open open = stack.back();
        stack.pop_back();
        const double elapsed = open.push->cpuElapsedUs(e);
        const std::string name = open.push->name();
        OpTime& t = out[by_shape ? name + " (" + shape_text(open.push->shapes()) + ")" : name];
        t.self_us += elapsed - open.children_us;
        ++t.calls;
        if (!stack.empty()) stack.back().children_us += elapsed;
      }
    }
  }
  return out;
}

// Keeps each freed block of 256 KiB or more for the next request of its size. Under the
// profiler a step's large tensors otherwise come from fresh pages: the profiler's records,
// small and kept until it stops, are cut from the large blocks a step frees, so the next
// step's tensors of the same size no longer fit there and glibc grows the heap (measured:
// the Transformer's process grew about 28 MB a step, 0.55 GB at 10 steps, 1.97 GB at 60)
// and every first write faults its pages in, which the profile charged to the op that
// wrote them (two thirds of the fused softmax's forward on a Zen 5 VM). A run has no such
// records and reuses its blocks (docs/benchmarks.md, "Where the quickstart's steps went,
// op by op"); the same shapes every step make a block of the same size the common case.
// What still faults is the profiler's own list of events as it grows. Blocks stay with the
// counting allocator beneath, which counts them as live: this tool reports time, not memory.
class StepBlockCache final : public lrb::torch_compat::AllocatorBase {
 public:
  explicit StepBlockCache(c10::Allocator* below) : below_(below), below_deleter_(below->raw_deleter()) {
    if (below_deleter_ == nullptr) throw std::logic_error("the allocator below has no raw deleter");
    instance_ = this;
  }

  c10::DataPtr allocate_block(std::size_t n) const override {
    void* data = nullptr;
    if (n >= kSmallest) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& kept = free_[n];
      if (!kept.empty()) {
        data = kept.back();
        kept.pop_back();
        live_[data] = n;
      }
    }
    if (data == nullptr) {
      c10::DataPtr block = below_->allocate(n);
      data = block.get();
      // The data pointer is its own context (as raw_allocate() requires), below and here.
      block.release_context();
      if (n >= kSmallest) {
        std::lock_guard<std::mutex> lock(mutex_);
        live_[data] = n;
      }
    }
    return c10::DataPtr(data, data, &release, c10::Device(c10::DeviceType::CPU));
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }

 private:
  static constexpr std::size_t kSmallest = 256 << 10;

  static void release(void* data) {
    if (data == nullptr) return;
    StepBlockCache& self = *instance_;
    {
      std::lock_guard<std::mutex> lock(self.mutex_);
      const auto found = self.live_.find(data);
      if (found != self.live_.end()) {
        self.free_[found->second].push_back(data);
        self.live_.erase(found);
        return;
      }
    }
    self.below_deleter_(data);
  }

  static StepBlockCache* instance_;
  c10::Allocator* below_;
  c10::DeleterFnPtr below_deleter_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<void*, std::size_t> live_;
  mutable std::unordered_map<std::size_t, std::vector<void*>> free_;
};
StepBlockCache* StepBlockCache::instance_ = nullptr;

std::vector<std::int64_t> parse_shape(const std::string& text) {
  std::vector<std::int64_t> dims;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    dims.push_back(std::stoll(text.substr(start, end - start)));
    start = end + 1;
  }
  if (dims.size() != 3) throw lrb::UserError("--grid takes channels,height,width, e.g. 1,28,28");
  return dims;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lrbench op profile: where a model's training step goes, op by op"};
  std::string model_name, options_text = "{}", grid = "1,28,28";
  std::int64_t classes = 10, batch = 32, steps = 10, warmup = 5, top = 25;
  int threads = 1;
  bool by_shape = false;
  app.add_option("model", model_name, "registered model (lrbench models)")->required();
  app.add_option("options", options_text, "the model's options as a JSON object");
  app.add_option("--grid", grid, "input image: channels,height,width");
  app.add_option("--classes", classes, "classes of the head")->check(CLI::Range(2, 1 << 20));
  app.add_option("--batch", batch, "batch size")->check(CLI::Range(1, 1 << 16));
  app.add_option("--steps", steps, "profiled steps")->check(CLI::Range(1, 10000));
  app.add_option("--warmup", warmup, "steps before profiling")->check(CLI::Range(0, 10000));
  app.add_option("--threads", threads, "intra-op threads")->check(CLI::Range(1, 1024));
  app.add_option("--top", top, "ops listed")->check(CLI::Range(1, 10000));
  app.add_flag("--shapes", by_shape, "one line per op and input shapes");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto& entries = lrb::ModelRegistry::instance().entries();
    const auto found = entries.find(model_name);
    if (found == entries.end() || !found->second.make)
      throw lrb::UserError("no model named '" + model_name + "' (lrbench models lists them)");
    const lrb::ModelEntry& entry = found->second;
    lrb::TaskInfo task;
    task.modality = lrb::Modality::Grid;
    task.num_classes = classes;
    task.metrics = {"accuracy"};
    task.input_shape = parse_shape(grid);
    lrb::json options = lrb::json::object();
    for (const auto& spec : entry.schema.options) options[spec.name] = spec.default_value;
    const lrb::json given = lrb::json::parse(options_text);
    if (!given.is_object()) throw lrb::UserError("the options must be a JSON object");
    for (const auto& [key, value] : given.items()) {
      if (!options.contains(key)) throw lrb::UserError(model_name + " has no option '" + key + "'");
      options[key] = value;
    }
    if (entry.schema.resolve) entry.schema.resolve(options, task.to_json());

    // As a run does (sweep_runner.cpp): its allocator keeps activations in the heap, where
    // LibTorch's default would fault fresh pages in on every step (7 % of a Longformer step).
    lrb::CpuMemoryCounter::install();
    static StepBlockCache block_cache(c10::GetCPUAllocator());
    c10::SetCPUAllocator(&block_cache, /*priority=*/101);
    at::set_num_threads(threads);
    torch::manual_seed(1);
    auto model = entry.make(options, task);
    model->train();
    std::vector<std::int64_t> shape{batch};
    shape.insert(shape.end(), task.input_shape.begin(), task.input_shape.end());
    const at::Tensor x = at::randn(shape), y = at::randint(0, classes, {batch}, at::kLong);
    lrb::FusedAdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-3).weight_decay(0.01));
    const auto step = [&] {
      optimizer.zero_grad();
      at::cross_entropy_loss(model->forward(x), y).backward();
      optimizer.step();
    };
    for (std::int64_t i = 0; i < warmup; ++i) step();
    const auto time_steps_us = [&] {
      const auto start = std::chrono::steady_clock::now();
      for (std::int64_t i = 0; i < steps; ++i) step();
      return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    };
    // The same steps without the profiler first: what the profiler's own cost adds.
    const double plain_us = time_steps_us();

    using namespace torch::profiler::impl;
    torch::autograd::profiler::enableProfilerLegacy(ProfilerConfig(ProfilerState::CPU, /*report_input_shapes=*/by_shape));
    const double wall_us = time_steps_us();
    const auto times = self_times(torch::autograd::profiler::disableProfilerLegacy(), by_shape);

    std::vector<std::pair<std::string, OpTime>> rows(times.begin(), times.end());
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.self_us > b.second.self_us; });
    double recorded_us = 0;
    for (const auto& [name, t] : rows) recorded_us += t.self_us;
    const auto per_step_ms = [&](double us) { return us / 1000.0 / static_cast<double>(steps); };
    fmt::print("{}: {} steps of batch {} on {} thread(s), {:.2f} ms a step with the profiler on ({:.2f} ms without it)\n",
               model_name, steps, batch, threads, per_step_ms(wall_us), per_step_ms(plain_us));
    fmt::print("{:>10}  {:>6}  {:>10}  {}\n", "ms/step", "share", "calls/step", "op (self time)");
    for (std::int64_t i = 0; i < std::min<std::int64_t>(top, static_cast<std::int64_t>(rows.size())); ++i) {
      const auto& [name, t] = rows[static_cast<std::size_t>(i)];
      fmt::print("{:>10.2f}  {:>5.1f}%  {:>10.1f}  {}\n", per_step_ms(t.self_us), 100.0 * t.self_us / wall_us,
                 static_cast<double>(t.calls) / static_cast<double>(steps), name);
    }
    fmt::print("{:>10.2f}  {:>5.1f}%  {:>10}  not in any op (fused kernels' forward, code between ops)\n",
               per_step_ms(wall_us - recorded_us), 100.0 * (wall_us - recorded_us) / wall_us, "");
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "lrb_op_profile: " << e.what() << "\n";
    return 1;
  }
}
