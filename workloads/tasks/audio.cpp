// Audio like VGGSound, synthesised: 8 classes of sound events (tone clusters, rising and
// falling chirps, noise bursts, tremolo tones, harmonic buzzes, click trains, two-tone
// sirens) over background noise, often with a quieter event of another class mixed in.
// Each waveform becomes a log-magnitude spectrogram (LibTorch's STFT, Hann window): a grid
// input [1, F, T] with F = n_fft / 2 frequency bins (the Nyquist bin is dropped) and
// T = samples / hop frames (the frame centred past the end is dropped), so powers of two
// stay powers of two: the defaults give [1, 128, 128].
//
// The waveform is portable arithmetic; the spectrogram goes through LibTorch's FFT and log,
// whose last bits may depend on the CPU, so values are rounded to multiples of 2^-10.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

#include "suite/registry/registry.h"
#include "suite/contracts/task.h"
#include "workloads/tasks/common.h"

namespace lrb {
namespace {

constexpr int kClasses = 8;

struct Params {
  std::int64_t train_size, samples, n_fft, hop;
  double sample_rate, noise, mix_prob;
};

// A raised-cosine gate over [a, b) seconds with `ramp`-second edges: 0 outside, 1 inside.
double gate(double t, double a, double b, double ramp) {
  if (t < a || t >= b) return 0.0;
  if (t < a + ramp) return 0.5 - 0.5 * pcos(kTwoPi / 2 * (t - a) / ramp);
  if (t > b - ramp) return 0.5 - 0.5 * pcos(kTwoPi / 2 * (b - t) / ramp);
  return 1.0;
}

// One event's place in its clip: amplitude, span (a to b, `len` long, ramped in and out)
// and the clip's sampling.
struct Event {
  double level, sr, nyq, dur, len, a, b, ramp;
  std::int64_t n;
  // A frequency drawn between lo and hi (at most 0.9 of Nyquist).
  double freq(Rng& rng, double lo, double hi) const { return lo + (std::min(hi, 0.9 * nyq) - lo) * rng.uniform(); }
};

// Tone cluster: 3-6 steady partials within one octave.
void add_tone_cluster(const Event& e, Rng& rng, std::vector<double>& w) {
  const double base = e.freq(rng, 200, 0.45 * e.nyq);
  const int k = static_cast<int>(rng.between(3, 6));
  for (int j = 0; j < k; ++j) {
    const double f = base * (1.0 + rng.uniform()), ph = rng.uniform() * kTwoPi;
    for (std::int64_t t = 0; t < e.n; ++t) {
      const double time = static_cast<double>(t) / e.sr;
      w[t] += e.level / k * gate(time, e.a, e.b, e.ramp) * psin(kTwoPi * f * time + ph);
    }
  }
}

// Chirp: linear sweep up or down over the event.
void add_chirp(const Event& e, Rng& rng, std::vector<double>& w, bool down) {
  double f1 = e.freq(rng, 150, 0.3 * e.nyq), f2 = e.freq(rng, 0.5 * e.nyq, 0.9 * e.nyq);
  if (down) std::swap(f1, f2);
  double phase = 0;
  for (std::int64_t t = 0; t < e.n; ++t) {
    const double time = static_cast<double>(t) / e.sr;
    const double u = std::min(1.0, std::max(0.0, (time - e.a) / e.len));
    phase += kTwoPi * (f1 + (f2 - f1) * u) / e.sr;
    if (phase > kTwoPi) phase -= kTwoPi;
    w[t] += e.level * gate(time, e.a, e.b, e.ramp) * psin(phase);
  }
}

// Noise bursts: 2-5 short bursts of band-passed noise.
void add_noise_bursts(const Event& e, Rng& rng, std::vector<double>& w) {
  const int k = static_cast<int>(rng.between(2, 5));
  for (int j = 0; j < k; ++j) {
    const double bl = 0.05 + 0.15 * rng.uniform(), ba = (e.dur - bl) * rng.uniform();
    // Two-pole resonator around fc (coefficients from portable cos).
    const double fc = e.freq(rng, 300, 0.8 * e.nyq), r = 0.97;
    const double c1 = 2 * r * pcos(kTwoPi * fc / e.sr), c2 = -r * r;
    double y1 = 0, y2 = 0;
    for (std::int64_t t = 0; t < e.n; ++t) {
      const double time = static_cast<double>(t) / e.sr;
      const double g = gate(time, ba, ba + bl, 0.005);
      const double y = c1 * y1 + c2 * y2 + (g > 0 ? noise_normal(rng) : 0.0);
      y2 = y1;
      y1 = y;
      w[t] += e.level * 0.15 * g * y;
    }
  }
}

// Tremolo tone: deep amplitude modulation at 3-15 Hz.
void add_tremolo_tone(const Event& e, Rng& rng, std::vector<double>& w) {
  const double f = e.freq(rng, 250, 0.6 * e.nyq), am = 3 + 12 * rng.uniform(), ph = rng.uniform() * kTwoPi;
  for (std::int64_t t = 0; t < e.n; ++t) {
    const double time = static_cast<double>(t) / e.sr;
    const double m = 0.5 + 0.5 * psin(kTwoPi * am * time + ph);
    w[t] += e.level * gate(time, e.a, e.b, e.ramp) * m * psin(kTwoPi * f * time);
  }
}

// Harmonic buzz: f0 of 100-300 Hz with 8 harmonics falling as 1/h.
void add_harmonic_buzz(const Event& e, Rng& rng, std::vector<double>& w) {
  const double f0 = e.freq(rng, 100, 300);
  for (std::int64_t t = 0; t < e.n; ++t) {
    const double time = static_cast<double>(t) / e.sr;
    const double g = gate(time, e.a, e.b, e.ramp);
    if (g == 0) continue;
    double v = 0;
    for (int h = 1; h <= 8; ++h)
      if (f0 * h < 0.9 * e.nyq) v += psin(kTwoPi * f0 * h * time) / h;
    w[t] += e.level * 0.5 * g * v;
  }
}

// Click train: short decaying clicks at 4-25 per second.
void add_click_train(const Event& e, Rng& rng, std::vector<double>& w) {
  const double rate = 4 + 21 * rng.uniform();
  for (double tc = e.a; tc < e.b; tc += 1.0 / rate) {
    const auto s0 = static_cast<std::int64_t>(tc * e.sr);
    double amp = e.level * 1.5;
    for (std::int64_t t = s0; t < std::min(e.n, s0 + 48); ++t) {
      w[t] += amp * noise_normal(rng);
      amp *= 0.85;
    }
  }
}

// Two-tone siren: alternates between two pitches every 0.08-0.25 s.
void add_siren(const Event& e, Rng& rng, std::vector<double>& w) {
  const double f1 = e.freq(rng, 400, 0.5 * e.nyq), f2 = f1 * (1.25 + 0.5 * rng.uniform());
  const double period = 0.08 + 0.17 * rng.uniform();
  double phase = 0;
  for (std::int64_t t = 0; t < e.n; ++t) {
    const double time = static_cast<double>(t) / e.sr;
    const bool high = static_cast<std::int64_t>(std::floor((time - e.a) / period)) % 2 == 1;
    phase += kTwoPi * (high ? f2 : f1) / e.sr;
    if (phase > kTwoPi) phase -= kTwoPi;
    w[t] += e.level * gate(time, e.a, e.b, e.ramp) * psin(phase);
  }
}

// Adds one event of class `c` at amplitude `level` to w.
void add_event(int c, double level, const Params& p, Rng& rng, std::vector<double>& w) {
  Event e;
  e.level = level;
  e.sr = p.sample_rate;
  e.nyq = e.sr / 2;
  e.dur = static_cast<double>(w.size()) / e.sr;
  e.n = static_cast<std::int64_t>(w.size());
  // Event span: most of the clip, at a random place.
  e.len = e.dur * (0.5 + 0.45 * rng.uniform());
  e.a = (e.dur - e.len) * rng.uniform();
  e.b = e.a + e.len;
  e.ramp = std::min(0.02, e.len / 4);
  switch (c) {
    case 0: return add_tone_cluster(e, rng, w);
    case 1: return add_chirp(e, rng, w, /*down=*/false);
    case 2: return add_chirp(e, rng, w, /*down=*/true);
    case 3: return add_noise_bursts(e, rng, w);
    case 4: return add_tremolo_tone(e, rng, w);
    case 5: return add_harmonic_buzz(e, rng, w);
    case 6: return add_click_train(e, rng, w);
    default: return add_siren(e, rng, w);
  }
}

// One waveform of class `label`, scaled to RMS 0.1.
void synthesise(const Params& p, std::int64_t label, Rng& rng, float* out) {
  std::vector<double> w(static_cast<std::size_t>(p.samples), 0.0);
  add_event(static_cast<int>(label), 1.0, p, rng, w);
  if (rng.uniform() < p.mix_prob) {  // a quieter event of another class
    const int other = static_cast<int>((label + 1 + static_cast<std::int64_t>(rng.below(kClasses - 1))) % kClasses);
    add_event(other, 0.2 + 0.2 * rng.uniform(), p, rng, w);
  }
  double energy = 0;
  for (double v : w) energy += v * v;
  const double rms = std::sqrt(energy / static_cast<double>(w.size()));
  const double scale = rms > 0 ? 0.1 / rms : 1.0;
  const double noise = p.noise * 0.1 * (0.5 + rng.uniform());
  for (std::size_t t = 0; t < w.size(); ++t) out[t] = static_cast<float>(w[t] * scale + noise * noise_normal(rng));
}

class Audio final : public PerSampleTask {
 public:
  explicit Audio(Params p) : PerSampleTask(p.train_size), p_(p) {}

 private:
  Split split(std::uint64_t seed, SplitStream stream, std::int64_t n) const override {
    Rng label_rng(sample_seed(seed, SplitStream::Labels, static_cast<std::uint64_t>(stream)));
    const auto labels = balanced_labels(n, kClasses, label_rng);
    const std::int64_t bins = p_.n_fft / 2, frames = p_.samples / p_.hop;
    auto x = at::empty({n, 1, bins, frames}, at::kFloat);
    const auto window = at::hann_window(p_.n_fft, /*periodic=*/true, at::kFloat);
    // In chunks, so the complex spectrogram of a large split never sits in memory whole.
    constexpr std::int64_t kChunk = 64;
    for (std::int64_t c0 = 0; c0 < n; c0 += kChunk) {
      const std::int64_t m = std::min(kChunk, n - c0);
      auto wave = at::empty({m, p_.samples}, at::kFloat);
      float* pw = wave.data_ptr<float>();
      at::parallel_for(0, m, 1, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
          Rng rng(sample_seed(seed, stream, static_cast<std::uint64_t>(c0 + i)));
          synthesise(p_, labels[static_cast<std::size_t>(c0 + i)], rng, pw + i * p_.samples);
        }
      });
      const auto spec = at::stft(wave, p_.n_fft, p_.hop, p_.n_fft, window, /*center=*/true, "reflect",
                                 /*normalized=*/false, /*onesided=*/true, /*return_complex=*/true);
      auto logmag = at::log(spec.abs() + 1e-5f).narrow(1, 0, bins).narrow(2, 0, frames);
      logmag = logmag.mul(1024.0f).round_().div_(1024.0f);
      x.narrow(0, c0, m).copy_(logmag.unsqueeze(1));
    }
    return {x, at::tensor(labels, at::kLong)};
  }

  Params p_;
};

std::int64_t samples_of(const json& o) {
  return static_cast<std::int64_t>(std::llround(o.at("sample_rate").get<double>() * o.at("duration").get<double>()));
}

TaskEntry audio_entry() {
  TaskEntry e;
  e.name = "audio";
  e.summary = "synthetic sound events like VGGSound as log-magnitude spectrograms [1, n_fft/2, samples/hop], 8 classes";
  e.uses_seq_len = false;
  e.schema.options = {
      {"train_size", OptionType::Int, json(2000), "training clips", {}, 1, {}},
      {"sample_rate", OptionType::Float, json(16000.0), "samples per second", {}, 2000.0, 96000.0},
      {"duration", OptionType::Float, json(1.024), "clip length in seconds (samples = sample_rate * duration)", {}, 0.05, 60.0},
      {"n_fft", OptionType::Int, json(256), "STFT window and FFT size (frequency bins = n_fft / 2)", {}, 16, 8192},
      {"hop", OptionType::Int, json(128), "STFT hop in samples (frames = samples / hop)", {}, 1, 8192},
      {"noise", OptionType::Float, json(1.0), "background noise level (1: about a tenth of the event's RMS)", {}, 0.0, 20.0},
      {"mix_prob", OptionType::Float, json(0.5), "probability of a quieter second event of another class", {}, 0.0, 1.0},
      metrics_option({"accuracy", "macro_f1"}),
  };
  e.schema.resolve = [](json& o, const json&) {
    const auto n_fft = o.at("n_fft").get<std::int64_t>(), hop = o.at("hop").get<std::int64_t>();
    if (n_fft % 2) throw OptionError("n_fft", "n_fft must be even");
    if (hop > n_fft) throw OptionError("hop", "hop must not exceed n_fft (frames would leave gaps)");
    if (samples_of(o) < n_fft) throw OptionError("duration", "the clip is shorter than one n_fft window; raise duration");
    resolve_metrics(o, false, kClasses);
  };
  e.describe = [](const json& o, std::int64_t) {
    TaskInfo t;
    t.modality = Modality::Grid;
    t.input_shape = {1, o.at("n_fft").get<std::int64_t>() / 2, samples_of(o) / o.at("hop").get<std::int64_t>()};
    t.num_classes = kClasses;
    t.metrics = metrics_of(o);
    return t;
  };
  e.make = [](const json& o, std::int64_t) -> std::unique_ptr<Task> {
    return std::make_unique<Audio>(Params{o.at("train_size").get<std::int64_t>(), samples_of(o),
                                          o.at("n_fft").get<std::int64_t>(), o.at("hop").get<std::int64_t>(),
                                          o.at("sample_rate").get<double>(), o.at("noise").get<double>(),
                                          o.at("mix_prob").get<double>()});
  };
  return e;
}

LRB_REGISTER_TASK(audio_entry());

}  // namespace
}  // namespace lrb
