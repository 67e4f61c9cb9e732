#include "suite/run/matmul_peak.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
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

// The rate of each timed product on `threads`, after one warm-up.
std::vector<double> time_products(const at::Device& device, int threads) {
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
  std::vector<double> rates;
  for (int i = 0; i < kPeakRepetitions; ++i) {
    const auto start = std::chrono::steady_clock::now();
    at::mm_out(c, a, b);
    synchronize_device(device);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rates.push_back(s > 0 ? 2.0 * n * n * n / s : 0.0);
  }
  return rates;
}

PeakTimings time_peak(const at::Device& device, int threads) {
  PeakTimings t;
  t.rates = time_products(device, threads);
  if (!device.is_cuda() && threads > 1) t.one_thread_rates = time_products(device, 1);
  return t;
}

double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

double best_of(const std::vector<double>& rates) { return rates.empty() ? 0.0 : *std::max_element(rates.begin(), rates.end()); }

// The 1-minute load average, or -1 where the system does not say.
double load_average() {
  try {
    std::istringstream in(read_user_file("/proc/loadavg", 4096, "the load average"));
    double load = -1;
    if (in >> load) return load;
  } catch (const std::exception&) {
  }
  return -1;
}

MatmulPeak measure(const at::Device& device, int threads, const PeakMeasurer& measurer) {
  MatmulPeak p;
  int attempts = 0;
  while (attempts < kPeakAttempts) {
    ++attempts;
    const double load = load_average();
    const PeakTimings t = measurer ? measurer(device, threads) : time_peak(device, threads);
    const double best = best_of(t.rates);
    const std::string suspect = peak_suspect(t, threads);
    // Of suspect attempts, the fastest is kept (load only ever slows a product down).
    if (attempts == 1 || suspect.empty() || best > p.flops_per_s) {
      p.flops_per_s = best;
      p.load = load;
      p.suspect = suspect;
    }
    if (suspect.empty()) break;
  }
  if (!p.suspect.empty()) p.suspect = fmt::format("{} (load average {:.2f}; {} attempts)", p.suspect, p.load, attempts);
  p.what = device.is_cuda() ? fmt::format("float32 {0}x{0} @ {0}x{0} on {1}, best of {2}", kPeakMatrixSide, device.str(), kPeakRepetitions)
                            : fmt::format("float32 {0}x{0} @ {0}x{0} on {1} thread{2} (cpu), best of {3}", kPeakMatrixSide, threads,
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

std::string peak_suspect(const PeakTimings& t, int threads) {
  const double best = best_of(t.rates);
  if (t.rates.empty() || !(best > 0) || !std::isfinite(best)) return "no product could be timed";
  const double worst = *std::min_element(t.rates.begin(), t.rates.end());
  if (worst < kPeakRepeatsAgree * best)
    return fmt::format("its repeats disagree: {:.1f} to {:.1f} GFLOP/s", worst / 1e9, best / 1e9);
  const double one = best_of(t.one_thread_rates);
  if (threads > 1 && one > best)
    return fmt::format("{} threads were slower than 1 ({:.1f} against {:.1f} GFLOP/s): another process was using the cores", threads,
                       best / 1e9, one / 1e9);
  return "";
}

nlohmann::json MatmulPeak::to_json() const {
  nlohmann::json j = {{"flops_per_s", flops_per_s}, {"what", what}, {"source", source}};
  if (!datasheet.empty()) j["datasheet"] = datasheet;
  if (!suspect.empty()) j["suspect"] = suspect;
  if (load >= 0) j["load"] = load;
  return j;
}

MatmulPeak matmul_peak(const at::Device& device, int threads, const fs::path& cache_folder, const PeakMeasurer& measurer) {
  MatmulPeak peak;
  const std::string key = cache_key(device, threads);
  const std::string datasheet = device.is_cuda() ? datasheet_peak(gpu_name(device)) : "";
  if (cache_folder.empty()) {
    peak = measure(device, threads, measurer);
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
    const auto load = e.find("load");
    const auto checked = e.find("checked");
    const auto suspect = e.find("suspect");
    const auto when = e.find("measured_unix");
    // An entry without `checked` predates the checks; a suspect one stands for a while only.
    const bool suspect_aged = suspect != e.end() && (!suspect->is_string() || when == e.end() || !when->is_number() ||
                                                     !(std::abs(unix_now() - when->get<double>()) < kSuspectPeakReuseSeconds));
    if (rate != e.end() && rate->is_number() && std::isfinite(rate->get<double>()) && rate->get<double>() > 0 &&
        what != e.end() && what->is_string() && checked != e.end() && *checked == true && !suspect_aged) {
      peak.flops_per_s = rate->get<double>();
      peak.what = what->get<std::string>();
      if (load != e.end() && load->is_number()) peak.load = load->get<double>();
      if (suspect != e.end()) peak.suspect = suspect->get<std::string>();
      peak.source = "cached in " + file.string();
      peak.datasheet = datasheet;
      return peak;
    }
  }
  peak = measure(device, threads, measurer);
  peak.datasheet = datasheet;
  cache[key] = {{"flops_per_s", peak.flops_per_s}, {"what", peak.what}, {"measured_at", utc_now_iso()},
                {"measured_unix", unix_now()}, {"load", peak.load}, {"checked", true}};
  if (!peak.suspect.empty()) cache[key]["suspect"] = peak.suspect;
  try {
    write_file_atomic(file, cache.dump(1) + "\n");
  } catch (const std::exception&) {
    // A cache that cannot be written (a full disk, a read-only home): measured again next time.
  }
  return peak;
}

}  // namespace lrb
