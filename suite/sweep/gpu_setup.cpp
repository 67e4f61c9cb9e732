#include "suite/sweep/gpu_setup.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in fmt/format.h only up to fmt 10)

#include <vector>

#include "suite/core/environment.h"
#include "suite/runtime/cuda_device.h"
#include "suite/runtime/gpu_binding.h"

namespace lrb {

int set_up_gpu(const MpiSession& mpi, nlohmann::json& provenance, int runs_per_gpu) {
  const nlohmann::json determinism = apply_cuda_determinism();
  const GpuBinding gpu = bind_gpu(process_env(), mpi.local_rank(), mpi.local_size(), cuda_device_count(), mpi.host(), runs_per_gpu);
  use_cuda_device(gpu.device_index);
  nlohmann::json description = gpu_description(gpu.device_index);
  description["binding"] = gpu.to_json();
  provenance["gpu"] = description;
  provenance["cuda"] = cuda_versions();
  provenance["determinism"] = determinism;
  return gpu.device_index;
}

std::string gpus_shared_by_ranks(const MpiSession& mpi, JobSteps& steps, nlohmann::json& provenance, int runs_per_gpu) {
  if (mpi.size() == 1) return "";
  const std::string id = mpi.host() + "/" + provenance.at("gpu").value("pci_bus_id", std::string("?"));
  const std::vector<std::string> ids = steps.gather(JobStep::gpus_compared, id, 256);
  if (const auto shared = shared_gpus(ids, runs_per_gpu); !shared.empty())
    return fmt::format("more than runs_per_gpu = {} rank(s) share a GPU ({}): give each rank its own (srun --gpus-per-task=1, "
                       "or as many ranks per node as GPUs with CUDA_VISIBLE_DEVICES unset), or raise [sweep] runs_per_gpu",
                       runs_per_gpu, fmt::join(shared, "; "));
  // The job's setting, the same on every rank, so a sweep's runs stay one cell whatever its
  // ranks' spread over the GPUs; beside it, how many ranks drove this rank's GPU.
  if (runs_per_gpu > 1) provenance["gpu"]["shared_by"] = runs_per_gpu;
  provenance["gpu"]["ranks_on_gpu"] = ranks_on_gpu_of(ids, static_cast<std::size_t>(mpi.rank()));
  return "";
}

}  // namespace lrb
