// lrbench's attention kernels, forward + backward, timed on a device (CPU or CUDA) with
// their peak memory: the lrbench side of the GPU check's comparison with PyTorch's own
// attention (scripts/device_check.sh, scripts/pytorch_attention_timing.py). Google
// Benchmark (tests/bench/attention_bench.cpp) is the CPU benchmark; this program needs no
// benchmark library, so it builds wherever lrbench does, against any LibTorch.
//
//   lrb_kernel_timing --device cuda --n 4096,8192 --kernels sliding_window,block_sparse [--repeats 5]
//                     [--max-score-elements E]
//
// B = 1, H = 4, d = 64, float32, as the CPU benchmark. One JSON object per line: kernel, n,
// seconds (median of the repeats, each a forward + backward ended by a device
// synchronisation), peak_bytes above the inputs (the CUDA caching allocator's peak, or the
// counting allocator's on the CPU), or "skipped" with the reason.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "suite/nn/attention/block_sparse.h"
#include "suite/nn/attention/sliding_window.h"
#include "suite/nn/attention/softmax.h"
#include "suite/runtime/counting_allocator.h"
#include "suite/runtime/cuda_device.h"
#include "suite/runtime/device_memory.h"

namespace {

constexpr std::int64_t kB = 1, kH = 4, kD = 64;

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

int usage(const std::string& why) {
  std::cerr << "lrb_kernel_timing: " << why
            << "\nusage: lrb_kernel_timing --device cpu|cuda --n N1,N2,... --kernels softmax,sliding_window,block_sparse "
               "[--repeats R] [--max-score-elements E]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using lrb::CpuMemoryCounter;
  std::string device_name = "cpu", kernels_arg = "softmax,sliding_window,block_sparse";
  std::vector<std::int64_t> sizes;
  int repeats = 5;
  std::int64_t max_score_elements = lrb::kDefaultMaxScoreElements;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage(a + " needs a value");
    const std::string v = argv[++i];
    try {
      if (a == "--device") device_name = v;
      else if (a == "--kernels") kernels_arg = v;
      else if (a == "--repeats") repeats = std::stoi(v);
      else if (a == "--max-score-elements") max_score_elements = std::stoll(v);
      else if (a == "--n")
        for (const auto& n : split(v)) sizes.push_back(std::stoll(n));
      else return usage("unknown option " + a);
    } catch (const std::exception&) {
      return usage("not a number: " + a + " " + v);
    }
  }
  if (device_name != "cpu" && device_name != "cuda") return usage("--device is cpu or cuda");
  if (sizes.empty() || repeats < 1 || max_score_elements < 1) return usage("give --n, and positive --repeats and --max-score-elements");
  for (const auto n : sizes)
    if (n < 256 || n > (std::int64_t{1} << 20)) return usage("each N must be between 256 and 1048576");
  const at::Device device = device_name == "cuda" ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  if (device.is_cuda() && lrb::cuda_device_count() == 0) return usage("--device cuda, but no CUDA device is visible");
  if (device.is_cpu()) CpuMemoryCounter::install();  // before any tensor, so every allocation is counted

  using Kernel = std::function<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>;
  lrb::SlidingWindowOptions window;  // w = 256, the CPU benchmark's
  window.max_score_elements = max_score_elements;
  lrb::BlockSparseOptions sparse;    // b = 64, r = 3
  sparse.max_score_elements = max_score_elements;
  const std::vector<std::pair<std::string, Kernel>> all = {
      {"softmax", [](auto& q, auto& k, auto& v) { return lrb::softmax_attention(q, k, v); }},
      {"sliding_window", [&](auto& q, auto& k, auto& v) { return lrb::sliding_window_attention(q, k, v, window); }},
      {"block_sparse", [&](auto& q, auto& k, auto& v) { return lrb::block_sparse_attention(q, k, v, sparse).out; }}};

  for (const auto& name : split(kernels_arg)) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& k) { return k.first == name; });
    if (it == all.end()) return usage("unknown kernel " + name);
    for (const auto n : sizes) {
      nlohmann::json row = {{"kernel", name}, {"n", n}, {"device", device_name}, {"max_score_elements", max_score_elements}};
      // The dense kernel's scores, probabilities and their gradients: 4 N² floats per head.
      const double dense_bytes = 4.0 * 4.0 * kB * kH * static_cast<double>(n) * static_cast<double>(n);
      const double limit = device.is_cuda() ? 0.8 * static_cast<double>(lrb::device_total_bytes(device)) : 8.0 * (1 << 30);
      if (name == "softmax" && dense_bytes > limit) {
        row["skipped"] = fmt::format("the dense kernel would hold about {:.0f} GiB of scores", dense_bytes / (1 << 30));
        std::cout << row.dump() << std::endl;
        continue;
      }
      try {
        at::manual_seed(0);
        const auto opts = at::TensorOptions().dtype(at::kFloat).device(device);
        at::Tensor q = at::randn({kB, kH, n, kD}, opts).requires_grad_(true);
        at::Tensor k = at::randn({kB, kH, n, kD}, opts).requires_grad_(true);
        at::Tensor v = at::randn({kB, kH, n, kD}, opts).requires_grad_(true);
        const at::Tensor upstream = at::randn({kB, kH, n, kD}, opts);
        std::vector<double> seconds;
        std::int64_t peak = 0;
        for (int r = 0; r <= repeats; ++r) {  // r = 0 warms up (kernels load, the allocator fills)
          for (auto* t : {&q, &k, &v}) t->mutable_grad().reset();
          lrb::synchronize_device(device);
          lrb::run_reset_peak(device);
          const std::int64_t base = lrb::run_live_bytes(device);
          const auto t0 = std::chrono::steady_clock::now();
          const at::Tensor out = it->second(q, k, v);
          out.backward(upstream.narrow(2, 0, out.size(2)));
          lrb::synchronize_device(device);
          const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          if (r > 0) seconds.push_back(s);
          peak = std::max(peak, lrb::run_peak_bytes(device) - base);
        }
        std::sort(seconds.begin(), seconds.end());
        row["seconds"] = seconds[seconds.size() / 2];
        row["peak_bytes"] = peak;
        row["repeats"] = repeats;
      } catch (const std::exception& e) {
        if (!lrb::is_device_out_of_memory(e)) throw;
        lrb::release_device_cache(device);
        row["skipped"] = "out of memory on the device";
      }
      std::cout << row.dump() << std::endl;
    }
  }
  return 0;
}
