// Wing-beat sounds like the UCR/UEA MosquitoSound set (6 species, series of 3,750 samples
// at 6 kHz), synthesised: each class is a band of fundamental frequencies; a sample has
// random harmonic amplitudes and phases, a slow frequency wobble (frequency jitter), an
// amplitude wobble (amplitude jitter) and white noise, and is z-normalised like UCR data.
// Any length: the series is seq_len samples long (seq_len / sample_rate seconds).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>

#include "suite/registry/registry.h"
#include "suite/contracts/task.h"
#include "workloads/tasks/common.h"

namespace lrb {
namespace {

constexpr int kClasses = 6;
// Fundamental bands in Hz: neighbouring bands touch, so samples near an edge are hard.
constexpr double kBandLow = 320.0, kBandWidth = 70.0;

struct Params {
  std::int64_t length, train_size, harmonics;
  double sample_rate, noise, freq_jitter, amp_jitter;
};

void synthesise(const Params& p, std::int64_t label, Rng& rng, float* out) {
  const double f0 = kBandLow + kBandWidth * (static_cast<double>(label) + rng.uniform());
  // Harmonic h has amplitude ~ 1/h with random spread; those above 0.45 * rate are dropped.
  std::vector<double> amp(static_cast<std::size_t>(p.harmonics)), phase(amp.size());
  for (std::int64_t h = 0; h < p.harmonics; ++h) {
    const double fh = f0 * static_cast<double>(h + 1);
    amp[static_cast<std::size_t>(h)] = fh < 0.45 * p.sample_rate ? (0.3 + 0.9 * rng.uniform()) / static_cast<double>(h + 1) : 0.0;
    phase[static_cast<std::size_t>(h)] = rng.uniform() * kTwoPi;
  }
  const double vib_rate = 1.0 + 7.0 * rng.uniform(), vib_phase = rng.uniform() * kTwoPi;
  const double trem_rate = 2.0 + 18.0 * rng.uniform(), trem_phase = rng.uniform() * kTwoPi;
  const double dt = 1.0 / p.sample_rate;
  std::vector<double> clean(static_cast<std::size_t>(p.length));
  double theta = 0, energy = 0;
  for (std::int64_t t = 0; t < p.length; ++t) {
    const double time = static_cast<double>(t) * dt;
    const double f = f0 * (1.0 + p.freq_jitter * psin(kTwoPi * vib_rate * time + vib_phase));
    theta += kTwoPi * f * dt;
    if (theta > kTwoPi) theta -= kTwoPi;
    const double env = 1.0 + p.amp_jitter * psin(kTwoPi * trem_rate * time + trem_phase);
    double v = 0;
    for (std::size_t h = 0; h < amp.size(); ++h)
      if (amp[h] > 0) v += amp[h] * psin(static_cast<double>(h + 1) * theta + phase[h]);
    clean[static_cast<std::size_t>(t)] = env * v;
    energy += env * v * env * v;
  }
  const double rms = std::sqrt(energy / static_cast<double>(p.length));
  double mean = 0, sq = 0;
  for (auto& v : clean) {
    v += p.noise * rms * noise_normal(rng);
    mean += v;
  }
  mean /= static_cast<double>(p.length);
  for (auto v : clean) sq += (v - mean) * (v - mean);
  const double sd = std::sqrt(sq / static_cast<double>(p.length));
  const double inv = sd > 0 ? 1.0 / sd : 1.0;
  for (std::int64_t t = 0; t < p.length; ++t) out[t] = static_cast<float>((clean[static_cast<std::size_t>(t)] - mean) * inv);
}

class Wingbeat final : public PerSampleTask {
 public:
  explicit Wingbeat(Params p) : PerSampleTask(p.train_size), p_(p) {}

 private:
  Split split(std::uint64_t seed, SplitStream stream, std::int64_t n) const override {
    Rng label_rng(sample_seed(seed, SplitStream::Labels, static_cast<std::uint64_t>(stream)));
    const auto labels = balanced_labels(n, kClasses, label_rng);
    auto x = at::empty({n, p_.length, 1}, at::kFloat);
    float* px = x.data_ptr<float>();
    at::parallel_for(0, n, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        Rng rng(sample_seed(seed, stream, static_cast<std::uint64_t>(i)));
        synthesise(p_, labels[static_cast<std::size_t>(i)], rng, px + i * p_.length);
      }
    });
    return {x, at::tensor(labels, at::kLong)};
  }

  Params p_;
};

TaskEntry wingbeat_entry() {
  TaskEntry e;
  e.name = "wingbeat";
  e.summary = "synthetic wing-beat sounds like MosquitoSound: 6 classes by fundamental band, signal [seq_len, 1]";
  e.schema.options = {
      {"train_size", OptionType::Int, json(2000), "training series", {}, 1, {}},
      {"sample_rate", OptionType::Float, json(6000.0), "samples per second (MosquitoSound: 6000)", {}, 1500.0, 192000.0},
      {"harmonics", OptionType::Int, json(5), "partials including the fundamental", {}, 1, 32},
      {"noise", OptionType::Float, json(0.5), "white-noise standard deviation relative to the clean signal's RMS", {}, 0.0, 10.0},
      {"freq_jitter", OptionType::Float, json(0.04), "depth of the slow frequency wobble (fraction of f0)", {}, 0.0, 0.5},
      {"amp_jitter", OptionType::Float, json(0.4), "depth of the amplitude wobble", {}, 0.0, 1.0},
      metrics_option({"accuracy", "macro_f1"}),
  };
  e.schema.resolve = [](json& o, const json& ctx) {
    const auto seq_len = ctx.at("seq_len").get<std::int64_t>();
    if (seq_len < 16) throw OptionError("seq_len", "wingbeat needs seq_len >= 16 samples");
    const double top = (kBandLow + kClasses * kBandWidth) * 2;
    if (o.at("sample_rate").get<double>() <= top)
      throw OptionError("sample_rate", "sample_rate must be above " + std::to_string(static_cast<int>(top)) +
                                           " Hz so the highest fundamental is below the Nyquist frequency");
    resolve_metrics(o, false, kClasses);
  };
  e.describe = [](const json& o, std::int64_t seq_len) {
    TaskInfo t;
    t.modality = Modality::Signal;
    t.input_shape = {seq_len, 1};
    t.num_classes = kClasses;
    t.metrics = metrics_of(o);
    return t;
  };
  e.make = [](const json& o, std::int64_t seq_len) -> std::unique_ptr<Task> {
    return std::make_unique<Wingbeat>(Params{seq_len, o.at("train_size").get<std::int64_t>(),
                                             o.at("harmonics").get<std::int64_t>(), o.at("sample_rate").get<double>(),
                                             o.at("noise").get<double>(), o.at("freq_jitter").get<double>(),
                                             o.at("amp_jitter").get<double>()});
  };
  return e;
}

LRB_REGISTER_TASK(wingbeat_entry());

}  // namespace
}  // namespace lrb
