#include "suite/runtime/precision.h"

#include <fmt/core.h>

#include <algorithm>
#include <string>
#include <vector>
#include <cstdlib>
#include <cstring>

#include "suite/core/cpu_info.h"
#include "suite/core/errors.h"
#include "suite/runtime/cuda_device.h"
#include "suite/runtime/torch_compat_autocast.h"

namespace lrb {

namespace {

Bf16Support cpu_bf16_support() {
  const std::vector<std::string> features = cpu_features();
  for (const char* how : {"amx_bf16", "avx512_bf16"})
    if (std::find(features.begin(), features.end(), how) != features.end()) return {true, how};
  return {false, "this CPU has neither AVX512-BF16 nor AMX-BF16"};
}

Bf16Support cuda_bf16_support(int index) {
  const nlohmann::json gpu = gpu_description(index);
  const std::string cc = gpu.value("compute_capability", std::string());
  const int major = cc.empty() ? 0 : std::atoi(cc.c_str());
  if (major >= 8) return {true, "compute capability " + cc};
  return {false, fmt::format("GPU {} ({}) has compute capability {}, below the 8.0 that bf16 needs", index,
                             gpu.value("name", std::string("?")), cc.empty() ? "unknown" : cc)};
}

}  // namespace

Bf16Support bf16_support(const c10::Device& device) {
  return device.is_cuda() ? cuda_bf16_support(device.index() < 0 ? 0 : device.index()) : cpu_bf16_support();
}

bool bf16_emulation_requested() {
  const char* v = std::getenv("LRB_BF16_WITHOUT_HARDWARE");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

std::string precision_refusal(const std::string& precision, const c10::Device& device) {
  if (precision != "bf16") return "";
  const Bf16Support s = bf16_support(device);
  if (s.native || bf16_emulation_requested()) return "";
  return fmt::format("precision = \"bf16\" needs bf16 arithmetic in hardware, and {}: run it on a machine that has it, use "
                     "precision = \"fp32\", or set LRB_BF16_WITHOUT_HARDWARE=1 to emulate it (the same rounding, slower than fp32: "
                     "for checking numerics, not speed)",
                     s.how);
}

nlohmann::json precision_provenance(const std::string& precision, const c10::Device& device) {
  if (precision != "bf16") return {{"precision", precision}};
  const Bf16Support s = bf16_support(device);
  return {{"precision", precision}, {"autocast_dtype", "bfloat16"}, {"native", s.native},
          {"how", s.native ? s.how : "emulated by LibTorch (LRB_BF16_WITHOUT_HARDWARE=1): " + s.how}};
}

AutocastScope::AutocastScope(const std::string& precision, const c10::Device& device) {
  if (precision == "fp32") return;
  LRB_CHECK(precision == "bf16", "a precision the schema does not allow");
  torch_compat::register_autocast_policies();
  active_ = true;
  type_ = device.type();
  was_enabled_ = torch_compat::autocast_enabled(type_);
  was_dtype_ = torch_compat::autocast_dtype(type_);
  torch_compat::set_autocast_enabled(type_, true);
  torch_compat::set_autocast_dtype(type_, c10::ScalarType::BFloat16);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // The outermost scope drops the bf16 copies of the weights autocast cached for its passes.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  torch_compat::set_autocast_enabled(type_, was_enabled_);
  torch_compat::set_autocast_dtype(type_, was_dtype_);
}

}  // namespace lrb
