#pragma once
// Facts about the machine and the libraries actually loaded: used by `lrbench doctor` and
// recorded as provenance in every run file.
#include <string>

#include <nlohmann/json.hpp>

namespace lrb {

struct BlasInfo {
  std::string library;  // real path of the loaded libblas (or OpenBLAS) shared object
  std::string config;   // OpenBLAS's own description (version, threading), when it is OpenBLAS
  bool reference = false;  // Netlib's reference BLAS: about 4x slower matrix products
};

BlasInfo loaded_blas();
std::string hdf5_library_version();
std::string mpi_library_version();  // first line of MPI_Get_library_version
// The Slurm variables that say which job, array task, attempt, nodes and task ran a run:
// SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID, SLURM_RESTART_COUNT (0 on a first
// attempt), SLURM_JOB_NODELIST, SLURM_PROCID, SLURM_NTASKS, SLURM_STEP_ID, ... — those set.
nlohmann::json slurm_environment();
std::string utc_now_iso();  // 2026-11-30T04:16:03Z
// Cores this process may run on (sched_getaffinity), at least 1.
int available_cores();
// The path of an executable on PATH, or "" if none.
std::string find_on_path(const std::string& name);

}  // namespace lrb
