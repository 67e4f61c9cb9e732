#include "suite/sweep/job_provenance.h"

#include <c10/core/Device.h>
#include <torch/version.h>
#include <unistd.h>

#include <cstdlib>

#include "suite/core/cache_folder.h"
#include "suite/core/cpu_info.h"
#include "suite/core/environment.h"
#include "suite/core/simd_level.h"
#include "suite/core/version.h"
#include "suite/hdf5/h5.h"
#include "suite/run/matmul_peak.h"

namespace lrb {

void set_matmul_peak(const SweepSpec& spec, RunContext& ctx) {
  const at::Device device = spec.sweep.device == "cuda" ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(ctx.device_index))
                                                        : at::Device(at::kCPU);
  const MatmulPeak peak = matmul_peak(device, ctx.threads, user_cache_folder());
  ctx.peak_flops_per_s = peak.flops_per_s;
  ctx.provenance["matmul_peak"] = peak.to_json();
}

nlohmann::json job_provenance(const MpiSession& mpi, const SweepSpec& spec, int threads, const Shard& shard) {
  const BlasInfo blas = loaded_blas();
  nlohmann::json j = {{"host", mpi.host()},
                      {"rank", mpi.rank()},
                      {"world_size", mpi.size()},
                      {"local_rank", mpi.local_rank()},
                      {"local_size", mpi.local_size()},
                      {"threads", threads},
                      {"sweep", spec.sweep.name},
                      {"sweep_file", spec.file},
                      {"lrbench_version", lrbench_version()},
                      {"git_revision", git_revision()},
                      {"git_dirty", git_dirty()},
                      {"torch_version", TORCH_VERSION},
                      {"blas", blas.library},
                      {"blas_config", blas.config},
                      {"blas_core", blas.core},  // the kernels OpenBLAS chose: a fallback runs several times slower
                      {"openblas_coretype", std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : ""},
                      {"blas_core_choice", blas.choice},  // who set openblas_coretype, and why
                      {"hdf5_version", h5::library_version()},
                      {"mpi_library", mpi_library_version()},
                      {"slurm", slurm_environment()},
                      {"pid", static_cast<long>(::getpid())}};
  // The processor and the cores this process may use: machines differ by 2x and more.
  j["cpu"] = cpu_info().to_json();
  j["cpu"]["cores_available"] = available_cores();
  j["cpu"]["physical_cores_available"] = available_physical_cores();
  // The CPU fast paths' level (suite/core/simd_level.h): FMA copies round differently.
  j["cpu"]["simd_level"] = simd_level_name(simd_level());
  j["heap_pages"] = heap_pages();  // huge pages or not: a few % of a step
  if (!shard.whole()) j["shard"] = shard.text();
  // Which GPUs this rank could see (Slurm's --gpus-per-task binding sets it per task).
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) j["cuda_visible_devices"] = v;
  return j;
}

}  // namespace lrb
