#include "suite/contracts/figure_key.h"

namespace lrb {

namespace {

constexpr std::string_view kVariantPrefix = "variant.";
constexpr std::string_view kTaskMetricPrefix = "eval_";
constexpr std::string_view kInferencePrefix = "infer_";
constexpr std::string_view kBatchTag = "_b";
constexpr std::string_view kProbePrefix = "probe_";

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.substr(s.size() - p.size()) == p; }

// infer_<what>_b<B>: a known <what> and a batch of 1 to 9 digits.
bool parse_inference(std::string_view f, FigureKey& key) {
  if (!starts_with(f, kInferencePrefix)) return false;
  const std::string_view rest = f.substr(kInferencePrefix.size());
  for (const std::string_view what : kInferenceFigures) {
    if (!starts_with(rest, what) || !starts_with(rest.substr(what.size()), kBatchTag)) continue;
    const std::string_view digits = rest.substr(what.size() + kBatchTag.size());
    // Written as std::to_string writes it: no leading zero, so that a name reads back to itself.
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos ||
        (digits[0] == '0' && digits.size() > 1))
      return false;
    key.kind = FigureKey::Kind::Inference;
    key.name = std::string(what);
    key.batch = std::stoll(std::string(digits));
    return true;
  }
  return false;
}

// probe_<probe>_<statistic>: a known statistic after a non-empty probe name.
bool parse_probe(std::string_view f, FigureKey& key) {
  if (!starts_with(f, kProbePrefix)) return false;
  const std::string_view rest = f.substr(kProbePrefix.size());
  for (const std::string_view stat : kProbeStatistics) {
    if (!ends_with(rest, stat) || rest.size() < stat.size() + 2 || rest[rest.size() - stat.size() - 1] != '_') continue;
    key.kind = FigureKey::Kind::Probe;
    key.probe = std::string(rest.substr(0, rest.size() - stat.size() - 1));
    key.statistic = std::string(stat);
    return true;
  }
  return false;
}

}  // namespace

std::string FigureKey::figure() const {
  switch (kind) {
    case Kind::TaskMetric: return std::string(kTaskMetricPrefix) + name;
    case Kind::Inference: return std::string(kInferencePrefix) + name + std::string(kBatchTag) + std::to_string(batch);
    case Kind::Probe: return std::string(kProbePrefix) + probe + "_" + statistic;
    case Kind::Plain: break;
  }
  return name;
}

std::string FigureKey::stored() const {
  return variant.empty() ? figure() : std::string(kVariantPrefix) + variant + "." + figure();
}

std::string FigureKey::display() const { return kind == Kind::TaskMetric && variant.empty() ? name : stored(); }

FigureKey FigureKey::parse(std::string_view stored) {
  FigureKey key;
  std::string_view f = stored;
  if (starts_with(f, kVariantPrefix)) {
    const auto dot = f.find('.', kVariantPrefix.size());
    if (dot != std::string_view::npos && dot > kVariantPrefix.size()) {  // a variant has a name
      key.variant = std::string(f.substr(kVariantPrefix.size(), dot - kVariantPrefix.size()));
      f.remove_prefix(dot + 1);
    }
  }
  if (starts_with(f, kTaskMetricPrefix)) {
    key.kind = Kind::TaskMetric;
    key.name = std::string(f.substr(kTaskMetricPrefix.size()));
  } else if (!parse_inference(f, key) && !parse_probe(f, key)) {
    key.name = std::string(f);
  }
  return key;
}

bool spelled_as_variant_figure(std::string_view name) {
  return starts_with(name, kInferencePrefix) || starts_with(name, kProbePrefix);
}

FigureKey FigureKey::task_metric(std::string metric, std::string variant) {
  FigureKey k;
  k.kind = Kind::TaskMetric;
  k.name = std::move(metric);
  k.variant = std::move(variant);
  return k;
}

FigureKey FigureKey::inference(std::string what, std::int64_t batch, std::string variant) {
  FigureKey k;
  k.kind = Kind::Inference;
  k.name = std::move(what);
  k.batch = batch;
  k.variant = std::move(variant);
  return k;
}

FigureKey FigureKey::probe_statistic(std::string probe, std::string statistic, std::string variant) {
  FigureKey k;
  k.kind = Kind::Probe;
  k.probe = std::move(probe);
  k.statistic = std::move(statistic);
  k.variant = std::move(variant);
  return k;
}

}  // namespace lrb
