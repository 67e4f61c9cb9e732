// lrbench doctor: what this machine gives lrbench — LibTorch, the BLAS actually loaded,
// threads, MPI, HDF5, CUDA/NCCL, Slurm.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <CLI/CLI.hpp>
#include <dlfcn.h>
#include <fmt/format.h>
#include <torch/version.h>

#include "suite/cli/command.h"
#include "suite/core/environment.h"
#include "suite/core/exit_codes.h"
#include "suite/core/version.h"

namespace lrb {
namespace {

int doctor() {
  // A small product makes LibTorch load its BLAS, so the report names the real library.
  (void)at::mm(at::ones({64, 64}), at::ones({64, 64})).sum().item<float>();
  int warnings = 0;
  fmt::print("lrbench      {} (git {}{})\n", lrbench_version(), git_revision(), git_dirty() ? ", dirty" : "");
  fmt::print("LibTorch     {}\n", TORCH_VERSION);
  const BlasInfo blas = loaded_blas();
  fmt::print("BLAS         {}{}\n", blas.library, blas.config.empty() ? "" : " (" + blas.config + ")");
  if (blas.reference) {
    ++warnings;
    fmt::print("  WARNING: this is the REFERENCE BLAS: matrix products run about 4x slower.\n"
               "           Install libopenblas0-openmp (scripts/setup.sh does) or select it with\n"
               "           update-alternatives --config libblas.so.3-x86_64-linux-gnu\n");
  }
  fmt::print("threads      intra-op {} (default; lrbench sets it per rank), inter-op {}, cores available {}\n",
             at::get_num_threads(), at::get_num_interop_threads(), available_cores());
  fmt::print("MPI          {}\n", mpi_library_version());
  fmt::print("HDF5         {}\n", hdf5_library_version());
  fmt::print("CUDA         {}\n", at::hasCUDA() ? fmt::format("usable, {} device(s)", at::getNumGPUs())
                                                : std::string("not usable (this LibTorch is CPU-only)"));
  void* nccl = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_LOCAL);
  fmt::print("NCCL         {}\n", nccl ? "library found (libnccl.so.2)" : "not found");
  if (nccl) dlclose(nccl);
  std::vector<std::string> slurm;
  for (const char* tool : {"sbatch", "srun", "squeue", "scancel", "sinfo"}) {
    const std::string p = find_on_path(tool);
    slurm.push_back(fmt::format("{} {}", tool, p.empty() ? "missing" : "ok"));
  }
  fmt::print("Slurm        {}\n", fmt::join(slurm, ", "));
  if (warnings) fmt::print("{} warning(s)\n", warnings);
  return kExitDone;
}

void add_doctor_command(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("doctor", "report LibTorch, the BLAS in use, threads, MPI, HDF5, CUDA/NCCL and Slurm");
  cmd->callback([&result] { result.exit_code = doctor(); });
}

LRB_REGISTER_COMMAND(add_doctor_command);

}  // namespace
}  // namespace lrb
