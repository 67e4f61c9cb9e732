#include "suite/runtime/cuda_device.h"

#include <ATen/Context.h>
#include <fmt/core.h>

#include <cstdlib>
#include <stdexcept>

#include "suite/core/errors.h"
#include "suite/core/process_info.h"

#ifdef LRB_WITH_CUDA
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace lrb {

namespace {
constexpr const char* kCublasWorkspace = ":4096:8";

#ifdef LRB_WITH_CUDA
// A failed CUDA runtime call is the environment's failure (driver, device): say where.
void cuda_check(cudaError_t rc, const char* call) {
  if (rc != cudaSuccess)
    throw std::runtime_error(fmt::format("CUDA call failed on {}: {} -> {} ({})", process_label(), call,
                                         cudaGetErrorName(rc), cudaGetErrorString(rc)));
}
std::string cuda_version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }
#endif
}  // namespace

bool cuda_compiled() {
#ifdef LRB_WITH_CUDA
  return true;
#else
  return false;
#endif
}

int cuda_device_count() {
#ifdef LRB_WITH_CUDA
  return at::hasCUDA() ? static_cast<int>(at::getNumGPUs()) : 0;
#else
  return 0;
#endif
}

nlohmann::json cuda_versions() {
  nlohmann::json j = {{"compiled", cuda_compiled()}};
#ifdef LRB_WITH_CUDA
  int driver = 0, runtime = 0;
  const cudaError_t d = cudaDriverGetVersion(&driver);
  const cudaError_t r = cudaRuntimeGetVersion(&runtime);
  j["driver"] = d == cudaSuccess && driver > 0 ? cuda_version_text(driver) : std::string("none (no NVIDIA driver loaded)");
  j["runtime"] = r == cudaSuccess ? cuda_version_text(runtime) : std::string(cudaGetErrorString(r));
  j["headers"] = cuda_version_text(CUDART_VERSION);
  const auto& hooks = at::detail::getCUDAHooks();
  j["libtorch_cuda"] = cuda_version_text(static_cast<int>(hooks.versionCUDART()));
  j["cudnn"] = hooks.hasCuDNN() ? std::to_string(hooks.versionCuDNN()) : std::string("none");
#endif
  return j;
}

nlohmann::json gpu_description(int index) {
#ifdef LRB_WITH_CUDA
  cudaDeviceProp p{};
  cuda_check(cudaGetDeviceProperties(&p, index), "cudaGetDeviceProperties");
  char bus[32] = {0};
  cuda_check(cudaDeviceGetPCIBusId(bus, sizeof bus, index), "cudaDeviceGetPCIBusId");
  return {{"index", index},
          {"name", p.name},
          {"total_memory_bytes", static_cast<double>(p.totalGlobalMem)},
          {"compute_capability", fmt::format("{}.{}", p.major, p.minor)},
          {"multiprocessors", p.multiProcessorCount},
          {"pci_bus_id", bus}};
#else
  (void)index;
  return {{"error", "this lrbench was built without CUDA (LRB_WITH_CUDA off)"}};
#endif
}

void use_cuda_device(int index) {
#ifdef LRB_WITH_CUDA
  const int n = cuda_device_count();
  if (index < 0 || index >= n)
    throw UserError(fmt::format("{}: CUDA device {} does not exist ({} visible)", process_label(), index, n));
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
#else
  throw UserError(fmt::format("{}: device = \"cuda\" but this lrbench was built without CUDA (LRB_WITH_CUDA off); "
                              "build it with -DLRB_WITH_CUDA=ON against a CUDA LibTorch, or use device = \"cpu\"",
                              process_label()));
  (void)index;
#endif
}

void synchronize_device(const c10::Device& device) {
#ifdef LRB_WITH_CUDA
  if (device.is_cuda()) c10::cuda::device_synchronize();
#else
  (void)device;
#endif
}

void* current_cuda_stream(int device) {
#ifdef LRB_WITH_CUDA
  return c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream();
#else
  (void)device;
  LRB_CHECK(false, "current_cuda_stream in a build without CUDA");
  return nullptr;
#endif
}

nlohmann::json apply_cuda_determinism() {
  // cuBLAS reads this when its first handle is made: it must be set before any CUDA work.
  ::setenv("CUBLAS_WORKSPACE_CONFIG", kCublasWorkspace, /*overwrite=*/0);
  auto& ctx = at::globalContext();
  ctx.setDeterministicAlgorithms(true, /*warn_only=*/true);
  ctx.setDeterministicCuDNN(true);
  ctx.setBenchmarkCuDNN(false);
  return {{"deterministic_algorithms", ctx.deterministicAlgorithms()},
          {"deterministic_algorithms_warn_only", ctx.deterministicAlgorithmsWarnOnly()},
          {"cudnn_deterministic", ctx.deterministicCuDNN()},
          {"cudnn_benchmark", ctx.benchmarkCuDNN()},
          {"cublas_workspace_config", std::getenv("CUBLAS_WORKSPACE_CONFIG")}};
}

}  // namespace lrb
