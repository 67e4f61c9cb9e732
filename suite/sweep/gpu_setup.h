#pragma once
// One GPU per rank: bound before any CUDA work (suite/runtime/gpu_binding.h), with the
// settings that make matched seeds repeat on it, and checked across the job.
#include <nlohmann/json.hpp>

#include <string>

#include "suite/mpi/mpi_session.h"
#include "suite/sweep/job_steps.h"

namespace lrb {

// Binds this rank to its GPU (up to `runs_per_gpu` ranks a GPU) and records the binding, the
// GPU's description, the CUDA versions and the determinism settings in `provenance`.
// Returns the device index.
int set_up_gpu(const MpiSession& mpi, nlohmann::json& provenance, int runs_per_gpu);

// Every rank's physical GPU, compared across the job (the gpus_compared step): more than
// `runs_per_gpu` ranks on one GPU is refused (a CUDA_VISIBLE_DEVICES given to every rank
// alike binds them all to one). Each rank records runs_per_gpu where above 1
// (gpu.shared_by: its time figures are not the model's alone) and how many ranks drove its
// GPU (gpu.ranks_on_gpu). Returns the problem, identical on every rank, or "".
std::string gpus_shared_by_ranks(const MpiSession& mpi, JobSteps& steps, nlohmann::json& provenance, int runs_per_gpu);

}  // namespace lrb
