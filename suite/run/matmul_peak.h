#pragma once
// The peak a rank's device can reach: the FLOP rate of a float32 matrix product on the
// rank's threads (or GPU), measured once per host, build, BLAS, device and thread count and
// cached, so that a run's achieved FLOP rate can be given as a share of what this machine
// does (model FLOP utilisation). Measured, not taken from a datasheet: the same BLAS core,
// threads and clocks as the runs.
#include <ATen/Device.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace lrb {

struct MatmulPeak {
  double flops_per_s = 0;  // the best of the timed products; 0 where unmeasured
  std::string what;        // "float32 2048x2048 @ 2048x2048 on 1 thread (cpu), best of 3"
  std::string source;      // "measured" or "cached in <file>"
  std::string datasheet;   // a GPU's published float32 peak beside it, where known
  // Why the figure may understate the device ("its repeats disagree: ..."), "" when its
  // checks passed. A suspect peak is cached for kSuspectPeakReuseSeconds only, marked so:
  // the next job after that measures again, perhaps on idle cores.
  std::string suspect;
  double load = -1;        // the host's 1-minute load average when measured; -1 unknown
  nlohmann::json to_json() const;
};

// Side of the square product measured, and how many timed repetitions (after one warm-up).
constexpr int kPeakMatrixSide = 2048;
constexpr int kPeakRepetitions = 3;
// A measurement is kept only when its slowest repetition is within this share of its best.
constexpr double kPeakRepeatsAgree = 0.85;
// Measurements tried before a suspect one is used as it is.
constexpr int kPeakAttempts = 3;
// How long a suspect peak is reused from the cache (a busy host's jobs would otherwise each
// spend seconds measuring again) before it is measured again.
constexpr double kSuspectPeakReuseSeconds = 600;

// One measurement: the FLOP rate of each timed repetition, on the threads asked for and (on
// a CPU with more than one) on one thread, to check that more threads are not slower.
struct PeakTimings {
  std::vector<double> rates;
  std::vector<double> one_thread_rates;  // empty on one thread or a GPU
};
using PeakMeasurer = std::function<PeakTimings(const at::Device&, int threads)>;

// Why these timings cannot stand for the device's peak (repeats that disagree, more threads
// slower than one: another process on the cores), or "" when they can.
std::string peak_suspect(const PeakTimings& t, int threads);

// From `cache_folder` (empty: measure and keep nothing) or measured now, under a lock so that
// the ranks of one machine measure one at a time and once. A damaged cache, an entry from
// before these checks, or a suspect one older than kSuspectPeakReuseSeconds is measured again. `measure`: the real products unless a test's.
MatmulPeak matmul_peak(const at::Device& device, int threads, const std::filesystem::path& cache_folder,
                       const PeakMeasurer& measure = {});

}  // namespace lrb
