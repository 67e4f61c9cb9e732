#pragma once
// One GPU per rank: bound before any CUDA work (suite/runtime/gpu_binding.h), with the
// settings that make matched seeds repeat on it, and checked across the job.
#include <nlohmann/json.hpp>

#include <string>

#include "suite/mpi/mpi_session.h"
#include "suite/sweep/job_steps.h"

namespace lrb {

// Binds this rank to its GPU and records the binding, the GPU's description, the CUDA
// versions and the determinism settings in `provenance`. Returns the device index.
int set_up_gpu(const MpiSession& mpi, nlohmann::json& provenance);

// Every rank's physical GPU, compared across the job (the gpus_compared step): two ranks on
// one GPU would measure each other, and a CUDA_VISIBLE_DEVICES given to every rank alike
// binds them all to one. Returns the problem, identical on every rank, or "".
std::string gpus_shared_by_ranks(const MpiSession& mpi, JobSteps& steps, const nlohmann::json& provenance);

}  // namespace lrb
