#include "suite/run/matmul_peak.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "suite/core/environment.h"
#include "suite/core/files.h"
#include "suite/core/version.h"
#include "suite/runtime/cuda_device.h"

namespace lrb {

namespace {

namespace fs = std::filesystem;

// Published dense float32 (non-tensor-core) peaks, named beside the measured one.
std::string datasheet_peak(const std::string& gpu_name) {
  static const std::pair<const char*, const char*> known[] = {
      {"H200", "H200 SXM datasheet: 67 TFLOP/s float32 (989 TFLOP/s TF32 tensor cores, dense)"},
      {"H100", "H100 SXM datasheet: 67 TFLOP/s float32 (495 TFLOP/s TF32 tensor cores, dense)"},
      {"A100", "A100 datasheet: 19.5 TFLOP/s float32 (156 TFLOP/s TF32 tensor cores)"},
  };
  for (const auto& [name, text] : known)
    if (gpu_name.find(name) != std::string::npos) return text;
  return "";
}

std::string gpu_name(const at::Device& device) {
  return gpu_description(device.has_index() ? device.index() : 0).value("name", std::string("cuda"));
}

MatmulPeak measure(const at::Device& device, int threads) {
  // On the threads asked for, the caller's setting restored after.
  struct Threads {
    int before = at::get_num_threads();
    explicit Threads(int n) { at::set_num_threads(n); }
    ~Threads() { at::set_num_threads(before); }
  } on(std::max(1, threads));
  const int n = kPeakMatrixSide;
  const auto options = at::TensorOptions().dtype(at::kFloat).device(device);
  const at::Tensor a = at::rand({n, n}, options), b = at::rand({n, n}, options);
  at::Tensor c = at::empty({n, n}, options);
  at::mm_out(c, a, b);  // warm-up: the library's buffers and threads
  synchronize_device(device);
  double best = 0;
  for (int i = 0; i < kPeakRepetitions; ++i) {
    const auto start = std::chrono::steady_clock::now();
    at::mm_out(c, a, b);
    synchronize_device(device);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s > 0) best = std::max(best, 2.0 * n * n * n / s);
  }
  MatmulPeak p;
  p.flops_per_s = best;
  p.what = device.is_cuda() ? fmt::format("float32 {0}x{0} @ {0}x{0} on {1}, best of {2}", n, device.str(), kPeakRepetitions)
                            : fmt::format("float32 {0}x{0} @ {0}x{0} on {1} thread{2} (cpu), best of {3}", n, threads,
                                          threads == 1 ? "" : "s", kPeakRepetitions);
  p.source = "measured";
  return p;
}

// What the cached figure must have been measured under to stand for this rank's peak.
std::string cache_key(const at::Device& device, int threads) {
  const BlasInfo blas = loaded_blas();
  return fmt::format("{} | {} | {} {} | {} | {} threads | {}", git_revision(), device.is_cuda() ? gpu_name(device) : "cpu",
                     blas.library, blas.core, device.str(), threads, kPeakMatrixSide);
}

}  // namespace

nlohmann::json MatmulPeak::to_json() const {
  nlohmann::json j = {{"flops_per_s", flops_per_s}, {"what", what}, {"source", source}};
  if (!datasheet.empty()) j["datasheet"] = datasheet;
  return j;
}

MatmulPeak matmul_peak(const at::Device& device, int threads, const fs::path& cache_folder) {
  MatmulPeak peak;
  const std::string key = cache_key(device, threads);
  const std::string datasheet = device.is_cuda() ? datasheet_peak(gpu_name(device)) : "";
  if (cache_folder.empty()) {
    peak = measure(device, threads);
    peak.datasheet = datasheet;
    return peak;
  }
  std::error_code ec;
  fs::create_directories(cache_folder, ec);
  const fs::path file = cache_folder / ("matmul-peak-" + host_name() + ".json");
  FileLock lock(cache_folder / ("matmul-peak-" + host_name() + ".lock"));
  nlohmann::json cache = nlohmann::json::object();
  try {
    // A damaged, foreign or unreadable file is measured again and replaced.
    cache = nlohmann::json::parse(read_user_file(file, 1 << 20, "the matmul peak cache"));
    if (!cache.is_object()) cache = nlohmann::json::object();
  } catch (const std::exception&) {
    cache = nlohmann::json::object();
  }
  if (const auto it = cache.find(key); it != cache.end() && it->is_object()) {
    const auto& e = *it;
    const auto rate = e.find("flops_per_s");
    const auto what = e.find("what");
    if (rate != e.end() && rate->is_number() && std::isfinite(rate->get<double>()) && rate->get<double>() > 0 &&
        what != e.end() && what->is_string()) {
      peak.flops_per_s = rate->get<double>();
      peak.what = what->get<std::string>();
      peak.source = "cached in " + file.string();
      peak.datasheet = datasheet;
      return peak;
    }
  }
  peak = measure(device, threads);
  peak.datasheet = datasheet;
  cache[key] = {{"flops_per_s", peak.flops_per_s}, {"what", peak.what}, {"measured_at", utc_now_iso()}};
  try {
    write_file_atomic(file, cache.dump(1) + "\n");
  } catch (const std::exception&) {
    // A cache that cannot be written (a full disk, a read-only home): measured again next time.
  }
  return peak;
}

}  // namespace lrb
