// lrbench doctor: what this machine gives lrbench — LibTorch, the BLAS actually loaded,
// threads, MPI, HDF5, CUDA/NCCL, Slurm.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <CLI/CLI.hpp>
#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in fmt/format.h only up to fmt 10)
#include <torch/version.h>

#include <cstdlib>
#include <set>

#include "suite/cli/command.h"
#include "suite/core/cache_folder.h"
#include "suite/core/cpu_info.h"
#include "suite/core/environment.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/files.h"
#include "suite/core/simd_level.h"
#include "suite/core/version.h"
#include "suite/hdf5/h5.h"
#include "suite/mpi/mpi_session.h"
#include "suite/mpi/nccl_run_group.h"
#include "suite/run/matmul_peak.h"
#include "suite/runtime/cuda_device.h"
#include "suite/runtime/gpu_binding.h"
#include "suite/runtime/precision.h"

namespace lrb {
namespace {

// The CUDA lines: how this lrbench was built, the driver and runtime, every visible GPU,
// and the one this process would drive as a rank (launcher variables, one GPU per rank).
void print_cuda() {
  if (!cuda_compiled()) {
    fmt::print("CUDA         not built in (LRB_WITH_CUDA off){}\n",
               at::hasCUDA() ? "; this LibTorch has CUDA: rebuild with -DLRB_WITH_CUDA=ON" : "; this LibTorch is CPU-only");
    return;
  }
  const nlohmann::json v = cuda_versions();
  fmt::print("CUDA         built in; driver {}, runtime {}, LibTorch built with CUDA {}, cuDNN {}\n",
             v.value("driver", "?"), v.value("runtime", "?"), v.value("libtorch_cuda", "?"), v.value("cudnn", "?"));
  const int n = cuda_device_count();
  if (n == 0) {
    fmt::print("  no GPU visible (CUDA_VISIBLE_DEVICES={})\n", std::getenv("CUDA_VISIBLE_DEVICES") ? std::getenv("CUDA_VISIBLE_DEVICES") : "(unset)");
    return;
  }
  for (int i = 0; i < n; ++i) {
    const nlohmann::json g = gpu_description(i);
    fmt::print("  GPU {}      {}, {:.1f} GiB, compute capability {}, {} SMs, PCI {}\n", i, g.at("name").get<std::string>(),
               g.at("total_memory_bytes").get<double>() / (1024.0 * 1024 * 1024), g.at("compute_capability").get<std::string>(),
               g.at("multiprocessors").get<int>(), g.at("pci_bus_id").get<std::string>());
  }
  try {
    const GpuBinding b = bind_gpu(process_env(), 0, 1, n, host_name());
    fmt::print("  this process as a rank would drive GPU {}: {}\n", b.device_index, b.reason);
  } catch (const UserError& e) {
    fmt::print("  as a rank: {}\n", e.what());
  }
}

// The BLAS LibTorch loaded, its kernels and who chose them; returns the warnings printed.
int print_blas() {
  int warnings = 0;
  const BlasInfo blas = loaded_blas();
  fmt::print("BLAS         {}{}\n", blas.library, blas.config.empty() ? "" : " (" + blas.config + ")");
  const bool chosen_by_lrbench = blas.choice.rfind("auto:", 0) == 0;
  const bool users_core = std::getenv("OPENBLAS_CORETYPE") != nullptr;
  if (!blas.core.empty())
    fmt::print("BLAS core    {}{}\n", blas.core,
               chosen_by_lrbench ? " (chosen by lrbench)" : users_core ? " (OPENBLAS_CORETYPE)" : "");
  if (!blas.choice.empty()) fmt::print("BLAS choice  {}\n", blas.choice);
  if (blas.fallback_core) {
    ++warnings;
    fmt::print("  WARNING: OpenBLAS runs its {} kernels, older than this processor ({}).\n"
               "           Matrix products can run several times faster with\n"
               "           OPENBLAS_CORETYPE={} set before lrbench starts (check a product against a\n"
               "           reference once: older OpenBLAS builds can misbehave on processors they do not know;\n"
               "           unset, the lrbench launcher tests it and sets it when it passes, see \"BLAS choice\").\n",
               blas.core, users_core ? "OPENBLAS_CORETYPE chose them" : "it did not recognise the processor",
               blas.better_core);
  }
  if (!blas.fallback_core && !blas.wider_core.empty()) {
    fmt::print("  NOTE: OpenBLAS runs its {} kernels (AVX2){} on a processor with AVX-512.\n"
               "        OPENBLAS_CORETYPE={} runs its AVX-512 kernels: compare the matmul peak below with\n"
               "        `OPENBLAS_CORETYPE={} lrbench doctor`{}.\n",
               blas.core, users_core ? ", chosen by OPENBLAS_CORETYPE," : "", blas.wider_core, blas.wider_core,
               users_core ? " (lrbench keeps a core you set; unset, OpenBLAS chooses)" : "");
  }
  if (blas.reference) {
    ++warnings;
    fmt::print("  WARNING: this is the REFERENCE BLAS: matrix products run about 4x slower.\n"
               "           Install libopenblas0-openmp (scripts/setup.sh does) or select it with\n"
               "           update-alternatives --config libblas.so.3-x86_64-linux-gnu\n");
  }
  return warnings;
}

void print_matmul_peaks() {
  // What runs' utilisation is measured against: one thread, and every core a rank alone gets.
  for (const int threads : std::set<int>{1, available_cores()}) {
    const MatmulPeak peak = matmul_peak(at::Device(at::kCPU), threads, user_cache_folder());
    fmt::print("matmul peak  {:.1f} GFLOP/s, {} ({})\n", peak.flops_per_s / 1e9, peak.what, peak.source);
    if (!peak.suspect.empty())
      fmt::print("             suspect: {}; measured again after 10 minutes (sooner: delete the cache file)\n", peak.suspect);
  }
}

int doctor() {
  // A small product makes LibTorch load its BLAS, so the report names the real library.
  (void)at::mm(at::ones({64, 64}), at::ones({64, 64})).sum().item<float>();
  int warnings = 0;
  fmt::print("lrbench      {} (git {}{})\n", lrbench_version(), git_revision(), git_dirty() ? ", dirty" : "");
  fmt::print("LibTorch     {}\n", TORCH_VERSION);
  warnings += print_blas();
  fmt::print("CPU          {}\n", cpu_info().text());
  fmt::print("SIMD level   {} (LRB_SIMD_LEVEL; this CPU: {})\n", simd_level_name(simd_level()), simd_level_name(cpu_simd_level()));
  fmt::print("threads      intra-op {} (default; lrbench sets it per rank), inter-op {}, cores available {} ({} physical: "
             "`lrbench run --ranks auto` starts up to that many ranks)\n",
             at::get_num_threads(), at::get_num_interop_threads(), available_cores(), available_physical_cores());
  const nlohmann::json heap = heap_pages();
  const std::string thp = heap["transparent_huge_pages"], tunables = heap["glibc_tunables"];
  fmt::print("heap pages   transparent huge pages {}, GLIBC_TUNABLES {}{}\n", thp.empty() ? "unknown" : "\"" + thp + "\"",
             tunables.empty() ? "unset" : "\"" + tunables + "\"",
             thp == "never" ? " (4 KiB pages only: training steps run a few % slower; docs/benchmarks.md, \"Huge pages for "
                              "training\")"
                            : "");
  print_matmul_peaks();
  if (const Bf16Support bf16 = bf16_support(at::Device(at::kCPU)); bf16.native)
    fmt::print("bf16         native on this CPU ({}): precision = \"bf16\" runs here\n", bf16.how);
  else
    fmt::print("bf16         not native: {}; precision = \"bf16\" is refused on the CPU (LRB_BF16_WITHOUT_HARDWARE=1 emulates it)\n",
               bf16.how);
  fmt::print("MPI          {}\n", mpi_library_version());
  fmt::print("HDF5         {}\n", h5::library_version());
  print_cuda();
  if (nccl_compiled()) {
    fmt::print("NCCL         built in, version {} (data-parallel groups on CUDA sum gradients over it: exchange = \"auto\")\n",
               nccl_version());
  } else {
    void* nccl = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_LOCAL);
    fmt::print("NCCL         not built in (LRB_WITH_NCCL off; gradients go over MPI){}\n",
               nccl ? "; libnccl.so.2 is here: rebuild with -DLRB_WITH_CUDA=ON -DLRB_WITH_NCCL=ON" : "");
    if (nccl) dlclose(nccl);
  }
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
