#pragma once
// The CUDA side of a run: which devices there are and what they are, waiting for a device
// before a clock is read, and the settings that make matched seeds repeat on a GPU. Built
// with LRB_WITH_CUDA (a CUDA LibTorch); without it every function answers "no CUDA".
#include <c10/core/Device.h>

#include <nlohmann/json.hpp>

namespace lrb {

// Whether this lrbench was built with the CUDA paths (LRB_WITH_CUDA).
bool cuda_compiled();
// Devices CUDA reports for this process (after CUDA_VISIBLE_DEVICES); 0 without CUDA.
int cuda_device_count();
// Driver, runtime and the CUDA/cuDNN LibTorch was built with; {"compiled": false} without.
nlohmann::json cuda_versions();
// One device: name, total memory, compute capability, multiprocessors, PCI bus id.
nlohmann::json gpu_description(int index);
// Makes `index` this process's current device (the caching allocator and default stream
// follow it). Throws UserError naming host and device when CUDA refuses.
void use_cuda_device(int index);
// Returns once every operation queued on `device` has finished (no-op on the CPU): the
// step clock is read only at such a boundary, never around asynchronous launches.
void synchronize_device(const c10::Device& device);
// The stream LibTorch queues work on for `device` (a cudaStream_t), for libraries that
// queue behind it (the NCCL exchange). Only in builds with CUDA.
void* current_cuda_stream(int device);
// Matched seeds on a GPU: deterministic algorithms (warn-only, so an operation without a
// deterministic CUDA kernel warns instead of failing the run; the device check compares
// two runs bit for bit), cuDNN benchmark off, deterministic cuDNN, and
// CUBLAS_WORKSPACE_CONFIG=:4096:8 unless already set. Call before the first CUDA
// operation; returns what was set, for provenance.
nlohmann::json apply_cuda_determinism();

}  // namespace lrb
