#pragma once
// Facts about the machine and the libraries actually loaded: used by `lrbench doctor` and
// recorded as provenance in every run file.
#include <string>

#include <nlohmann/json.hpp>

#include "suite/core/blas_cores.h"

namespace lrb {

struct BlasInfo {
  std::string library;  // real path of the loaded libblas (or OpenBLAS) shared object
  std::string config;   // OpenBLAS's own description (version, threading), when it is OpenBLAS
  std::string core;     // the kernels OpenBLAS chose for this processor ("SkylakeX", "Prescott")
  bool reference = false;  // Netlib's reference BLAS: about 4x slower matrix products
  // OpenBLAS fell back to kernels older than the processor (it did not recognise it: Debian
  // 12's 0.3.21 runs SSE3 "Prescott" kernels on AVX-512 machines it does not know, about 4x
  // slower); `better_core` is the OPENBLAS_CORETYPE the processor's features allow.
  bool fallback_core = false;
  std::string better_core;
  // AVX2 kernels on a processor with AVX-512 (often a user's OPENBLAS_CORETYPE=Haswell): the
  // AVX-512 core it could run instead, said by doctor, never set by lrbench.
  std::string wider_core;
  // What the launcher chose for OPENBLAS_CORETYPE and why (suite/cli/launcher.cpp): "auto:
  // ..." where it set a self-tested better core, "kept ...: ..." where that core failed its
  // test, "user: ..." where the user had set it; empty where lrbench-core was not started
  // by the launcher.
  std::string choice;
};

BlasInfo loaded_blas();
// The Slurm variables that say which job, array task, attempt, nodes and task ran a run:
// SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID, SLURM_RESTART_COUNT (0 on a first
// attempt), SLURM_JOB_NODELIST, SLURM_PROCID, SLURM_NTASKS, SLURM_STEP_ID, ... — those set.
nlohmann::json slurm_environment();
std::string utc_now_iso();  // 2026-11-30T04:16:03Z
// Cores this process may run on (sched_getaffinity), at least 1.
int available_cores();
// Physical cores among them: distinct (package, core) pairs in /sys's CPU topology, so two
// hardware threads of one core count once (what mpirun counts as slots). available_cores()
// where the topology cannot be read.
int available_physical_cores();
// The heap's pages: `transparent_huge_pages`, the system's mode (/sys/kernel/mm/
// transparent_hugepage/enabled: "always", "madvise" or "never"; "" where it cannot be read),
// and `glibc_tunables`, the GLIBC_TUNABLES this process started with (the lrbench launcher
// sets glibc.malloc.hugetlb=1, which makes glibc ask for huge pages under "madvise").
nlohmann::json heap_pages();
// The path of an executable on PATH, or "" if none.
std::string find_on_path(const std::string& name);

}  // namespace lrb
