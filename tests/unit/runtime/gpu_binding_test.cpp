// One GPU per rank, chosen from the launcher's environment (suite/runtime/gpu_binding.h):
// pure logic, tested without a GPU.
#include <gtest/gtest.h>

#include <map>

#include "suite/core/errors.h"
#include "suite/runtime/cuda_device.h"
#include "suite/runtime/device_memory.h"
#include "suite/runtime/gpu_binding.h"

#include <ATen/Context.h>
#include <cstdlib>
#include <fstream>

#include "tests/support/subprocess.h"
#include "tests/support/sweeps.h"

namespace lrb {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string user_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(GpuBinding, LocalRankFromTheLauncherThenFromMpi) {
  // mpirun: Open MPI's own variables win over MPI's count.
  auto r = local_rank_from(env_of({{"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}), 0, 1);
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.size, 4);
  EXPECT_EQ(r.source, "OMPI_COMM_WORLD_LOCAL_RANK");
  // srun --mpi=pmix: SLURM_LOCALID, the node's size from MPI.
  r = local_rank_from(env_of({{"SLURM_LOCALID", "1"}}), 1, 2);
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.size, 2);
  EXPECT_EQ(r.source, "SLURM_LOCALID");
  // Nothing set: MPI_Comm_split_type's figures.
  r = local_rank_from(env_of({}), 1, 2);
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.source, "MPI_Comm_split_type");
  // Garbage or a rank outside the node is ignored.
  r = local_rank_from(env_of({{"OMPI_COMM_WORLD_LOCAL_RANK", "x1"}, {"SLURM_LOCALID", "7"}, {"MPI_LOCALRANKID", "-1"}}), 0, 2);
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(r.source, "MPI_Comm_split_type");
  // A single process, no MPI.
  r = local_rank_from(env_of({}), 0, 1);
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(r.size, 1);
}

TEST(GpuBinding, LocalRankPicksAmongTheVisibleDevices) {
  // mpirun -np 4 on a node with 4 GPUs: ranks 0..3 take devices 0..3.
  for (int rank = 0; rank < 4; ++rank) {
    const auto b = bind_gpu(env_of({{"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank)},
                                    {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}),
                            0, 1, 4, "node1");
    EXPECT_EQ(b.device_index, rank);
    EXPECT_EQ(b.cuda_visible_devices, "(unset)");
  }
  // Slurm's --gres=gpu:2 without per-task binding: both tasks see both GPUs.
  const auto b = bind_gpu(env_of({{"SLURM_LOCALID", "1"}, {"CUDA_VISIBLE_DEVICES", "0,1"}}), 1, 2, 2, "node1");
  EXPECT_EQ(b.device_index, 1);
  EXPECT_EQ(b.to_json().at("local_rank_source"), "SLURM_LOCALID");
  EXPECT_EQ(b.to_json().at("cuda_visible_devices"), "0,1");
}

TEST(GpuBinding, ABoundRankUsesItsOneDevice) {
  // srun --gpus-per-task=1: each task sees one GPU (its own id), whatever its local rank.
  for (const char* id : {"0", "3", "GPU-8c2f5e9a-0000-0000-0000-000000000000"}) {
    const auto b = bind_gpu(env_of({{"SLURM_LOCALID", "3"}, {"CUDA_VISIBLE_DEVICES", id}}), 3, 4, 1, "node1");
    EXPECT_EQ(b.device_index, 0);
    EXPECT_NE(b.reason.find("bound to one GPU"), std::string::npos) << b.reason;
  }
}

TEST(GpuBinding, RefusesNoDeviceAndSharedDevices) {
  auto msg = user_error([] { bind_gpu(env_of({{"CUDA_VISIBLE_DEVICES", ""}}), 0, 1, 0, "node7"); });
  EXPECT_NE(msg.find("no GPU is visible on host node7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("device = \"cpu\""), std::string::npos) << msg;
  // Four ranks on a node with two GPUs and no binding: two would share each GPU.
  msg = user_error([] {
    bind_gpu(env_of({{"OMPI_COMM_WORLD_LOCAL_RANK", "2"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}), 0, 1, 2, "node7");
  });
  EXPECT_NE(msg.find("4 rank(s) on this node but 2 visible GPU(s)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("host node7 local rank 2 of 4"), std::string::npos) << msg;
  // Two ranks, one GPU, nothing bound: refused as well.
  msg = user_error([] { bind_gpu(env_of({{"SLURM_LOCALID", "1"}}), 1, 2, 1, "node7"); });
  EXPECT_NE(msg.find("2 rank(s) on this node but 1 visible GPU(s)"), std::string::npos) << msg;
}

TEST(GpuBinding, RanksOnOneGpuAreFound) {
  EXPECT_TRUE(shared_gpus({"a/0000:3b:00.0", "a/0000:5e:00.0", "b/0000:3b:00.0"}).empty());
  const auto shared = shared_gpus({"a/0000:3b:00.0", "b/0000:3b:00.0", "a/0000:3b:00.0", "a/0000:3b:00.0"});
  ASSERT_EQ(shared.size(), 1u);
  EXPECT_EQ(shared[0], "host a GPU 0000:3b:00.0: ranks 0, 2, 3");
}

// [sweep] runs_per_gpu = k: up to k ranks a GPU, spread round robin; more is refused, naming
// the host, the ranks and the devices, as one rank too many is at k = 1.
TEST(GpuBinding, UpToRunsPerGpuRanksShareEachDevice) {
  for (int rank = 0; rank < 8; ++rank) {
    const auto b = bind_gpu(env_of({{"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank)}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}}), 0,
                            1, 2, "node1", 4);
    EXPECT_EQ(b.device_index, rank % 2);
    EXPECT_NE(b.reason.find("up to 4 ranks a GPU"), std::string::npos) << b.reason;
  }
  // Three ranks at k = 4 on two GPUs: both GPUs used, not all three on the first.
  EXPECT_EQ(bind_gpu(env_of({{"SLURM_LOCALID", "1"}}), 1, 3, 2, "node1", 4).device_index, 1);
  const auto msg = user_error([] {
    bind_gpu(env_of({{"OMPI_COMM_WORLD_LOCAL_RANK", "8"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "9"}}), 0, 1, 2, "node7", 4);
  });
  EXPECT_NE(msg.find("9 rank(s) on this node but 2 visible GPU(s)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("at runs_per_gpu = 4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("start at most 8 rank(s) per node"), std::string::npos) << msg;
  // The job-wide check: up to k ranks on a GPU pass, k + 1 do not; each rank learns how
  // many drive its GPU (recorded as gpu.shared_by).
  const std::vector<std::string> ids = {"a/0", "a/1", "a/0", "b/0", "a/0"};
  EXPECT_TRUE(shared_gpus(ids, 3).empty());
  ASSERT_EQ(shared_gpus(ids, 2).size(), 1u);
  EXPECT_EQ(shared_gpus(ids, 2)[0], "host a GPU 0: ranks 0, 2, 4");
  EXPECT_EQ(ranks_on_gpu_of(ids, 0), 3);
  EXPECT_EQ(ranks_on_gpu_of(ids, 1), 1);
  EXPECT_EQ(ranks_on_gpu_of(ids, 3), 1);
}

// What a build without the CUDA paths says about them, and what it still does: the
// determinism settings a GPU run applies are plain LibTorch settings, set and read back here.
TEST(CudaDevice, ABuildWithoutCudaSaysSoEverywhere) {
  if (cuda_compiled()) {
    EXPECT_TRUE(cuda_versions().at("compiled").get<bool>());
    return;  // the device check (scripts/device_check.sh) covers a CUDA build
  }
  EXPECT_EQ(cuda_device_count(), 0);
  EXPECT_EQ(cuda_versions(), nlohmann::json({{"compiled", false}}));
  EXPECT_NE(gpu_description(0).at("error").get<std::string>().find("LRB_WITH_CUDA off"), std::string::npos);
  const std::string msg = user_error([] { use_cuda_device(0); });
  EXPECT_NE(msg.find("built without CUDA"), std::string::npos) << msg;
  EXPECT_NE(msg.find("device = \"cpu\""), std::string::npos) << msg;
  const c10::Device cpu(c10::kCPU);
  synchronize_device(cpu);  // a no-op on the CPU
  EXPECT_EQ(device_peak_bytes(cpu), -1);
  EXPECT_EQ(device_live_bytes(cpu), -1);
  EXPECT_EQ(run_memory_source(cpu), "lrbench counting CPU allocator");
}

TEST(CudaDevice, DeterminismSettingsAreAppliedAndReported) {
  ::unsetenv("CUBLAS_WORKSPACE_CONFIG");
  const nlohmann::json d = apply_cuda_determinism();
  EXPECT_TRUE(d.at("deterministic_algorithms").get<bool>());
  EXPECT_TRUE(d.at("deterministic_algorithms_warn_only").get<bool>());
  EXPECT_TRUE(d.at("cudnn_deterministic").get<bool>());
  EXPECT_FALSE(d.at("cudnn_benchmark").get<bool>());
  EXPECT_EQ(d.at("cublas_workspace_config"), ":4096:8");
  EXPECT_STREQ(std::getenv("CUBLAS_WORKSPACE_CONFIG"), ":4096:8");
  // A value the user set is kept, and recorded as set.
  ::setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8", 1);
  EXPECT_EQ(apply_cuda_determinism().at("cublas_workspace_config"), ":16:8");
  at::globalContext().setDeterministicAlgorithms(false, false);
  ::unsetenv("CUBLAS_WORKSPACE_CONFIG");
}

// device = "cuda" where the CUDA paths or a GPU are missing: refused before anything runs,
// with what to do; `lrbench doctor` says the same.
TEST(CudaDevice, ACudaSweepWithoutCudaIsRefusedWithWhatToDo) {
  if (cuda_compiled() && cuda_device_count() > 0) GTEST_SKIP() << "this machine has a usable GPU: scripts/device_check.sh runs the CUDA sweep";
  test::TempDir t;
  std::ofstream(t / "cuda.toml") << test::tiny_sweep(2, "device = \"cuda\"\n");
  const auto r = test::run({test::lrbench(), "run", (t / "cuda.toml").string(), "--out", (t / "out").string()});
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("device = \"cpu\""), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(t / "out" / "runs")) << "nothing may be written";
  const auto doctor = test::run({test::lrbench(), "doctor"});
  EXPECT_EQ(doctor.code, 0) << doctor.output;
  EXPECT_NE(doctor.output.find(cuda_compiled() ? "CUDA         built in" : "CUDA         not built in (LRB_WITH_CUDA off)"),
            std::string::npos)
      << doctor.output;
}

}  // namespace
}  // namespace lrb
