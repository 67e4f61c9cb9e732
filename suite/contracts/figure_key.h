#pragma once
// The grammar of a stored figure name, taken apart and written in one place:
//   [variant.<v>.]<figure>
//   <figure> = eval_<task metric>           a task metric on the evaluation split
//            | infer_<what>_b<B>            a variant's inference figure at batch size B
//            | probe_<probe>_<statistic>    a variant's activation probe against the model as trained
//            | <name>                       a run's or a model's figure (peak_bytes, params, ...)
// Every reader and writer of such names goes through FigureKey (figures.h declares what
// each figure is; this says how its name is spelled).
#include <cstdint>
#include <string>
#include <string_view>

namespace lrb {

struct FigureKey {
  enum class Kind { Plain, TaskMetric, Inference, Probe };
  std::string variant;  // "" for the model as trained
  Kind kind = Kind::Plain;
  std::string name;        // Plain: the name; TaskMetric: "accuracy"; Inference: "peak_bytes" (infer_peak_bytes_b<B>)
  std::int64_t batch = 0;  // Inference
  std::string probe, statistic;  // Probe: probe_<probe>_<statistic>

  // The stored name: "variant.fast.infer_peak_bytes_b8", "eval_accuracy", ...
  std::string stored() const;
  // The figure without its variant: "infer_peak_bytes_b8".
  std::string figure() const;
  // A name as tables show it: a task metric of the model as trained without "eval_"
  // ("accuracy"), the rest as stored.
  std::string display() const;

  // Any string parses: what fits none of the forms is Plain.
  static FigureKey parse(std::string_view stored);
  static FigureKey task_metric(std::string metric, std::string variant = "");
  static FigureKey inference(std::string what, std::int64_t batch, std::string variant);
  static FigureKey probe_statistic(std::string probe, std::string statistic, std::string variant);
};

// The statistics a probe records, as probe_<probe>_<statistic> ends.
inline constexpr std::string_view kProbeStatistics[] = {"cosine", "mean_shift", "var_ratio", "channel_mean", "channel_var"};
// What a variant times at each batch size, as infer_<what>_b<B> begins.
inline constexpr std::string_view kInferenceFigures[] = {"peak_bytes", "seconds", "samples_per_s"};

// Whether a name is spelled as a variant's own figure (infer_..., probe_...), whether or not
// it parses as one: what a claim must read through a variant.
bool spelled_as_variant_figure(std::string_view name);

}  // namespace lrb
