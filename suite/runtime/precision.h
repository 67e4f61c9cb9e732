#pragma once
// A run's arithmetic precision, [train] precision: "fp32", or "bf16" — every forward pass
// under LibTorch's autocast to bfloat16 (products and convolutions in bf16; reductions,
// normalisations and the loss in fp32), while weights, gradients and optimizer state stay
// fp32. Backward runs outside the scope, in the types its forward recorded (PyTorch's
// autocast recipe), so the optimizer updates fp32 master weights.
//
// bf16 runs where the hardware has it: a CPU with AVX512-BF16 or AMX-BF16, a GPU of compute
// capability 8.0 or later. Elsewhere LibTorch would emulate it (slower than fp32, the same
// rounding of the inputs), so it is refused unless LRB_BF16_WITHOUT_HARDWARE=1 asks for the
// emulation (to check numerics on a machine without it; its step times say nothing of bf16).
#include <c10/core/Device.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include <nlohmann/json.hpp>

#include <string>

namespace lrb {

// What this machine offers for bf16 on `device`: whether it is native, and the instruction
// set or compute capability that makes it so (or what is missing).
struct Bf16Support {
  bool native = false;
  std::string how;  // "avx512_bf16", "amx_bf16", "compute capability 9.0"; else what is missing
};
Bf16Support bf16_support(const c10::Device& device);

// Whether LRB_BF16_WITHOUT_HARDWARE=1 asks for emulated bf16 where it is not native.
bool bf16_emulation_requested();

// "" when `precision` can run on `device` here; else why not and what to do.
std::string precision_refusal(const std::string& precision, const c10::Device& device);

// For a run's provenance: {"precision", "autocast_dtype", "native", "how"}.
nlohmann::json precision_provenance(const std::string& precision, const c10::Device& device);

// Forward passes inside one of these run under the run's precision; "fp32" leaves
// autocast as it was. Restores the previous state (nesting like Python's torch.autocast)
// and drops autocast's cast-weight cache when the outermost scope ends.
class AutocastScope {
 public:
  AutocastScope(const std::string& precision, const c10::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  c10::DeviceType type_ = c10::DeviceType::CPU;
  bool was_enabled_ = false;
  c10::ScalarType was_dtype_ = c10::ScalarType::BFloat16;
};

}  // namespace lrb
