#pragma once
// The peak a rank's device can reach: the FLOP rate of a float32 matrix product on the
// rank's threads (or GPU), measured once per host, build, BLAS, device and thread count and
// cached, so that a run's achieved FLOP rate can be given as a share of what this machine
// does (model FLOP utilisation). Measured, not taken from a datasheet: the same BLAS core,
// threads and clocks as the runs.
#include <ATen/Device.h>

#include <filesystem>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace lrb {

struct MatmulPeak {
  double flops_per_s = 0;  // the best of the timed products; 0 where unmeasured
  std::string what;        // "float32 2048x2048 @ 2048x2048 on 1 thread (cpu), best of 3"
  std::string source;      // "measured" or "cached in <file>"
  std::string datasheet;   // a GPU's published float32 peak beside it, where known
  nlohmann::json to_json() const;
};

// Side of the square product measured, and how many timed repetitions (after one warm-up).
constexpr int kPeakMatrixSide = 2048;
constexpr int kPeakRepetitions = 3;

// From `cache_folder` (empty: measure and keep nothing) or measured now, under a lock so that
// the ranks of one machine measure one at a time and once. A damaged cache is measured again.
MatmulPeak matmul_peak(const at::Device& device, int threads, const std::filesystem::path& cache_folder);

}  // namespace lrb
