#pragma once
// Which GPU a rank drives: one GPU per rank, the rank's place among the ranks of its node.
// Pure logic over the launcher's environment, so it is tested without a GPU; the runner
// passes the number of devices CUDA reports (after CUDA_VISIBLE_DEVICES has been applied).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lrb {

// Reads one environment variable; nullopt when unset. Tests pass a map instead of getenv.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_env();

struct LocalRank {
  int rank = 0;        // this process among the processes of its node
  int size = 1;        // processes on the node
  std::string source;  // where it came from: the variable's name, or "MPI_Comm_split_type"
};

// The launcher's own word first (OMPI_COMM_WORLD_LOCAL_RANK under mpirun, SLURM_LOCALID
// under srun, MPI_LOCALRANKID under MPICH-style launchers), else the rank among the ranks
// that share memory with this one as MPI counted them (`mpi_local_rank`). The node's size
// is OMPI_COMM_WORLD_LOCAL_SIZE, else MPI's count (`mpi_local_size`). A variable that does
// not parse, or names a rank outside the node's size, is ignored for MPI's figures.
LocalRank local_rank_from(const EnvLookup& env, int mpi_local_rank, int mpi_local_size);

struct GpuBinding {
  int device_index = 0;  // CUDA device ordinal within the visible devices
  LocalRank local;
  int visible_devices = 0;
  std::string cuda_visible_devices;  // as set, or "(unset)"
  std::string reason;                // one line: why this device
  nlohmann::json to_json() const;
};

// One GPU per rank, or up to `runs_per_gpu` ranks per GPU ([sweep] runs_per_gpu: many small
// runs share a device; their time figures are then not the model's alone). `visible` is the
// device count CUDA reports for this process.
//  - Slurm or the user bound this process to exactly one device: that one (index 0).
//  - Otherwise the node's ranks share the visible devices: device = local rank modulo the
//    devices, which needs at least ranks / runs_per_gpu devices on the node.
// Throws UserError (with host, ranks and devices) when there is no device, or more ranks on
// the node than runs_per_gpu × devices.
GpuBinding bind_gpu(const EnvLookup& env, int mpi_local_rank, int mpi_local_size, int visible,
                    const std::string& host, int runs_per_gpu = 1);

// Ranks that ended up on one physical GPU, from each rank's "host/PCI bus id" (in rank
// order): one line per GPU driven by more than `runs_per_gpu` ranks ("host h GPU
// 0000:3b:00.0: ranks 0, 1"), empty when none is. Binding by CUDA_VISIBLE_DEVICES alone
// cannot see another rank's choice; this compares them all.
std::vector<std::string> shared_gpus(const std::vector<std::string>& rank_gpu_ids, int runs_per_gpu = 1);
// How many ranks drive rank `rank`'s GPU (1: it has the GPU to itself).
int ranks_on_gpu_of(const std::vector<std::string>& rank_gpu_ids, std::size_t rank);

}  // namespace lrb
