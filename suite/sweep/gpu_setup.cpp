#include "suite/sweep/gpu_setup.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in fmt/format.h only up to fmt 10)

#include <vector>

#include "suite/core/environment.h"
#include "suite/runtime/cuda_device.h"
#include "suite/runtime/gpu_binding.h"

namespace lrb {

int set_up_gpu(const MpiSession& mpi, nlohmann::json& provenance) {
  const nlohmann::json determinism = apply_cuda_determinism();
  const GpuBinding gpu = bind_gpu(process_env(), mpi.local_rank(), mpi.local_size(), cuda_device_count(), mpi.host());
  use_cuda_device(gpu.device_index);
  nlohmann::json description = gpu_description(gpu.device_index);
  description["binding"] = gpu.to_json();
  provenance["gpu"] = description;
  provenance["cuda"] = cuda_versions();
  provenance["determinism"] = determinism;
  return gpu.device_index;
}

std::string gpus_shared_by_ranks(const MpiSession& mpi, JobSteps& steps, const nlohmann::json& provenance) {
  if (mpi.size() == 1) return "";
  const std::string id = mpi.host() + "/" + provenance.at("gpu").value("pci_bus_id", std::string("?"));
  const std::vector<std::string> ids = steps.gather(JobStep::gpus_compared, id, 256);
  if (const auto shared = shared_gpus(ids); !shared.empty())
    return fmt::format("ranks share a GPU ({}): give each rank its own (srun --gpus-per-task=1, or as many "
                       "ranks per node as GPUs with CUDA_VISIBLE_DEVICES unset)",
                       fmt::join(shared, "; "));
  return "";
}

}  // namespace lrb
