#pragma once
// Pieces every task file shares: per-sample random streams, portable sine, the `metrics`
// and `view` options, and balanced labels. Generators use only lrb::Rng and IEEE
// arithmetic (+ - * / sqrt floor), so a (task, options, seq_len, seed) gives the same bytes
// on every machine; libm's sin/exp may differ in the last bit between systems, so the
// generators call psin()/pcos() below instead.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "suite/contracts/options.h"
#include "suite/core/seeds.h"
#include "suite/contracts/task_info.h"
#include "suite/contracts/task.h"

namespace lrb {

// Independent streams per split and sample: sample i of a split never depends on how many
// samples another split has (eval stays the same when train_size changes), and samples
// can be generated in parallel without changing a byte.
enum class SplitStream : std::uint64_t { Train = 1, Eval = 2, Labels = 3 };
std::uint64_t sample_seed(std::uint64_t seed, SplitStream split, std::uint64_t index);

// A task whose train and eval splits come from one generator that draws every sample from
// its own stream (sample_seed): the two splits differ only by their stream.
class PerSampleTask : public Task {
 public:
  explicit PerSampleTask(std::int64_t train_size) : train_size_(train_size) {}
  TaskData generate(const DataRequest& req) const final {
    TaskData d;
    d.train = split(req.seed, SplitStream::Train, train_size_);
    d.eval = split(req.seed, SplitStream::Eval, req.eval_size);
    return d;
  }

 protected:
  virtual Split split(std::uint64_t seed, SplitStream stream, std::int64_t n) const = 0;

 private:
  std::int64_t train_size_;
};

// Fisher–Yates with lrb::Rng (std::shuffle's output differs between standard libraries).
template <class T>
void portable_shuffle(std::vector<T>& v, Rng& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

// n labels, each class appearing n / classes or one more times, in random order.
std::vector<std::int64_t> balanced_labels(std::int64_t n, std::int64_t classes, Rng& rng);

// Sine and cosine from + - * / and floor only: the same bits on every platform.
// Accurate to about 1e-15 for |x| < 1e6 (phases are wrapped long before that).
double psin(double x);
double pcos(double x);
inline constexpr double kTwoPi = 6.283185307179586476925286766559;

// An approximately standard normal deviate (sum of four uniforms, rescaled): cheap, and
// free of libm, for additive noise.
double noise_normal(Rng& rng);

// The `metrics` option: comma-separated names from the metric table, the first is the
// primary. `defaults` is the task's own list.
OptionSpec metrics_option(const std::vector<std::string>& defaults);
// Checks and normalises o["metrics"] (names known, multi-label kind matching the task, k of
// top-k below num_classes when that is known (> 0), no repeats). Throws OptionError.
void resolve_metrics(json& o, bool multilabel, std::int64_t num_classes);
std::vector<std::string> metrics_of(const json& o);

// The `view` option of image tasks: "grid" (float [C, H, W] in [0, 1]) or "sequence"
// (pixel tokens 0..255, vocab 256, no pad token).
OptionSpec view_option(const std::string& default_view);
// TaskInfo for 8-bit images of `channels` x h x w seen through `view`.
TaskInfo image_info(const std::string& view, std::int64_t channels, std::int64_t h, std::int64_t w,
                    std::int64_t num_classes, std::vector<std::string> metrics);
// Turns uint8 images [n, C, H, W] into the view's x: grid -> float / 255; sequence ->
// int64 tokens [n, C*H*W].
at::Tensor image_view(const at::Tensor& pixels_u8, const std::string& view);

// The rows of `t` at `index` (a copy, contiguous).
at::Tensor take_rows(const at::Tensor& t, const std::vector<std::int64_t>& index);

}  // namespace lrb
