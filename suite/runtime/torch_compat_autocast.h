#pragma once
// The autocast half of torch_compat.h: LibTorch 1.13 names autocast's switches per device
// (set_cpu_enabled, set_autocast_gpu_dtype, ...); 2.x takes the device type as an argument
// and deprecates the old names.
#include <ATen/autocast_mode.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <torch/version.h>

namespace lrb::torch_compat {

#if TORCH_VERSION_MAJOR >= 2
inline bool autocast_enabled(c10::DeviceType type) { return at::autocast::is_autocast_enabled(type); }
inline void set_autocast_enabled(c10::DeviceType type, bool on) { at::autocast::set_autocast_enabled(type, on); }
inline c10::ScalarType autocast_dtype(c10::DeviceType type) { return at::autocast::get_autocast_dtype(type); }
inline void set_autocast_dtype(c10::DeviceType type, c10::ScalarType dtype) { at::autocast::set_autocast_dtype(type, dtype); }
#else
inline bool autocast_enabled(c10::DeviceType type) {
  return type == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
inline void set_autocast_enabled(c10::DeviceType type, bool on) {
  if (type == c10::DeviceType::CUDA) at::autocast::set_enabled(on);
  else at::autocast::set_cpu_enabled(on);
}
inline c10::ScalarType autocast_dtype(c10::DeviceType type) {
  return type == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
}
inline void set_autocast_dtype(c10::DeviceType type, c10::ScalarType dtype) {
  if (type == c10::DeviceType::CUDA) at::autocast::set_autocast_gpu_dtype(dtype);
  else at::autocast::set_autocast_cpu_dtype(dtype);
}
#endif

// The autocast policies LibTorch lacks (torch_compat_autocast.cpp registers them when this
// library is loaded); calling it keeps that file in a static link.
void register_autocast_policies();

}  // namespace lrb::torch_compat
