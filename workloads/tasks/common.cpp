#include "workloads/tasks/common.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "suite/core/text.h"
#include "suite/contracts/metrics.h"

namespace lrb {

std::uint64_t sample_seed(std::uint64_t seed, SplitStream split, std::uint64_t index) {
  // SplitMix64 finaliser over a combination of the three; cheap enough per sample.
  std::uint64_t z = seed ^ (static_cast<std::uint64_t>(split) * 0xd1b54a32d192ed03ULL) ^
                    ((index + 1) * 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::vector<std::int64_t> balanced_labels(std::int64_t n, std::int64_t classes, Rng& rng) {
  LRB_CHECK(classes > 0 && n >= 0, "balanced_labels: bad sizes");
  std::vector<std::int64_t> y(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) y[static_cast<std::size_t>(i)] = i % classes;
  portable_shuffle(y, rng);
  return y;
}

namespace {
// pi/2 split in three parts (Cody–Waite) so x - k*pi/2 is exact enough for large k.
constexpr double kPio2Hi = 1.57079632673412561417e+00;
constexpr double kPio2Mid = 6.07710050650619224932e-11;
constexpr double kPio2Lo = 2.02226624879595063154e-21;
constexpr double kTwoOverPi = 6.36619772367581382433e-01;

// sin and cos on [-pi/4, pi/4] by their Taylor series (Horner form, error < 1e-16).
double sin_kernel(double r) {
  const double r2 = r * r;
  return r * (1.0 + r2 * (-1.0 / 6 + r2 * (1.0 / 120 + r2 * (-1.0 / 5040 + r2 * (1.0 / 362880 +
              r2 * (-1.0 / 39916800 + r2 * (1.0 / 6227020800.0 + r2 * (-1.0 / 1307674368000.0))))))));
}
double cos_kernel(double r) {
  const double r2 = r * r;
  return 1.0 + r2 * (-0.5 + r2 * (1.0 / 24 + r2 * (-1.0 / 720 + r2 * (1.0 / 40320 + r2 * (-1.0 / 3628800 +
               r2 * (1.0 / 479001600.0 + r2 * (-1.0 / 87178291200.0)))))));
}
// Quadrant q (mod 4) and remainder r of x = q*pi/2 + r, |r| <= pi/4.
double reduce(double x, std::int64_t& q) {
  const double k = std::floor(x * kTwoOverPi + 0.5);
  q = static_cast<std::int64_t>(k);
  return ((x - k * kPio2Hi) - k * kPio2Mid) - k * kPio2Lo;
}
}  // namespace

double psin(double x) {
  std::int64_t q = 0;
  const double r = reduce(x, q);
  switch (q & 3) {
    case 0: return sin_kernel(r);
    case 1: return cos_kernel(r);
    case 2: return -sin_kernel(r);
    default: return -cos_kernel(r);
  }
}

double pcos(double x) {
  std::int64_t q = 0;
  const double r = reduce(x, q);
  switch (q & 3) {
    case 0: return cos_kernel(r);
    case 1: return -sin_kernel(r);
    case 2: return -cos_kernel(r);
    default: return sin_kernel(r);
  }
}

double noise_normal(Rng& rng) {
  // Irwin–Hall(4) has variance 4/12; scale to 1.
  const double s = rng.uniform() + rng.uniform() + rng.uniform() + rng.uniform();
  return (s - 2.0) * 1.7320508075688772;
}

OptionSpec metrics_option(const std::vector<std::string>& defaults) {
  OptionSpec s{"metrics", OptionType::String, json(join(defaults, ",")),
               "comma-separated metric names, the first is the primary (e.g. \"accuracy,top5\")"};
  // A list here would make every name its own run; a metric set is one value.
  s.axis = false;
  return s;
}

void resolve_metrics(json& o, bool multilabel, std::int64_t num_classes) {
  std::vector<std::string> known, names;
  for (const auto& m : metric_table())
    if (m.multilabel == multilabel) known.push_back(m.name);
  const std::string text = o.at("metrics").get<std::string>();
  std::string cur;
  auto flush = [&] {
    std::string t;
    for (char c : cur)
      if (c != ' ' && c != '\t') t += c;
    cur.clear();
    if (t.empty()) throw OptionError("metrics", "'metrics' has an empty name in \"" + text + "\"; write names separated by commas, e.g. \"" + join(known, ",") + "\"");
    const MetricDef* m = find_metric(t);
    if (!m) throw OptionError("metrics", "unknown metric '" + t + "'" + suggestion(t, known));
    if (m->multilabel != multilabel)
      throw OptionError("metrics", std::string("metric '") + t + "' is for " +
                                       (m->multilabel ? "multi-label" : "single-label") + " tasks and this task is " +
                                       (multilabel ? "multi-label" : "single-label") + "; use one of: " + join(known, ", "));
    if (m->top_k > 0 && num_classes > 0 && m->top_k >= num_classes)
      throw OptionError("metrics", "metric '" + t + "' needs more than " + std::to_string(m->top_k) +
                                       " classes and this task has " + std::to_string(num_classes));
    if (std::find(names.begin(), names.end(), t) != names.end())
      throw OptionError("metrics", "'metrics' names '" + t + "' twice");
    names.push_back(t);
  };
  for (char c : text) {
    if (c == ',') flush();
    else cur += c;
  }
  flush();
  o["metrics"] = join(names, ",");
}

std::vector<std::string> metrics_of(const json& o) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : o.at("metrics").get<std::string>()) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

OptionSpec view_option(const std::string& default_view) {
  return {"view", OptionType::String, json(default_view),
          "\"grid\": float image [C, H, W] in [0, 1]; \"sequence\": pixel tokens 0-255 (vocab 256, no pad), length C*H*W",
          {"grid", "sequence"}};
}

TaskInfo image_info(const std::string& view, std::int64_t channels, std::int64_t h, std::int64_t w,
                    std::int64_t num_classes, std::vector<std::string> metrics) {
  TaskInfo t;
  if (view == "sequence") {
    t.modality = Modality::Tokens;
    t.input_shape = {channels * h * w};
    t.vocab_size = 256;
    t.pad_token = -1;
  } else {
    t.modality = Modality::Grid;
    t.input_shape = {channels, h, w};
  }
  t.num_classes = num_classes;
  t.metrics = std::move(metrics);
  return t;
}

at::Tensor image_view(const at::Tensor& pixels_u8, const std::string& view) {
  LRB_CHECK(pixels_u8.scalar_type() == at::kByte && pixels_u8.dim() == 4, "image_view wants uint8 [n, C, H, W]");
  // Explicit sizes: -1 is ambiguous for an empty split.
  const auto n = pixels_u8.size(0), len = pixels_u8.size(1) * pixels_u8.size(2) * pixels_u8.size(3);
  if (view == "sequence") return pixels_u8.reshape({n, len}).to(at::kLong).contiguous();
  return pixels_u8.to(at::kFloat).div_(255.0f).contiguous();
}

at::Tensor take_rows(const at::Tensor& t, const std::vector<std::int64_t>& index) {
  const auto idx = at::from_blob(const_cast<std::int64_t*>(index.data()), {static_cast<std::int64_t>(index.size())},
                                 at::kLong);
  return t.index_select(0, idx).contiguous();
}

}  // namespace lrb
