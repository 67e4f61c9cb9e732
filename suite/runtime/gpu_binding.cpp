#include "suite/runtime/gpu_binding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in fmt/format.h only up to fmt 10)

#include <algorithm>
#include <cstdlib>
#include <map>

#include "suite/core/errors.h"

namespace lrb {

namespace {

std::optional<int> env_nonnegative(const EnvLookup& env, const char* name) {
  const auto v = env(name);
  if (!v || v->empty()) return std::nullopt;
  char* end = nullptr;
  const long x = std::strtol(v->c_str(), &end, 10);
  if (!end || *end != '\0' || x < 0 || x > 1 << 20) return std::nullopt;
  return static_cast<int>(x);
}

// Entries of a CUDA_VISIBLE_DEVICES list ("0,1", "GPU-uuid", "" = none).
int listed_devices(const std::string& list) {
  if (list.empty()) return 0;
  int n = 1;
  for (char c : list) n += c == ',';
  return n;
}

}  // namespace

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

LocalRank local_rank_from(const EnvLookup& env, int mpi_local_rank, int mpi_local_size) {
  LocalRank r;
  r.size = std::max(1, mpi_local_size);
  if (const auto s = env_nonnegative(env, "OMPI_COMM_WORLD_LOCAL_SIZE"); s && *s > 0) r.size = *s;
  r.rank = mpi_local_rank;
  r.source = "MPI_Comm_split_type";
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"}) {
    if (const auto v = env_nonnegative(env, name); v && *v < r.size) {
      r.rank = *v;
      r.source = name;
      break;
    }
  }
  if (r.rank < 0 || r.rank >= r.size) {
    r.rank = 0;
    r.source = "single process";
  }
  return r;
}

nlohmann::json GpuBinding::to_json() const {
  return {{"device_index", device_index},     {"local_rank", local.rank},
          {"local_size", local.size},         {"local_rank_source", local.source},
          {"visible_devices", visible_devices}, {"cuda_visible_devices", cuda_visible_devices},
          {"reason", reason}};
}

GpuBinding bind_gpu(const EnvLookup& env, int mpi_local_rank, int mpi_local_size, int visible,
                    const std::string& host, int runs_per_gpu) {
  LRB_CHECK(runs_per_gpu >= 1, "runs_per_gpu is validated to be at least 1");
  GpuBinding b;
  b.local = local_rank_from(env, mpi_local_rank, mpi_local_size);
  b.visible_devices = visible;
  const auto cvd = env("CUDA_VISIBLE_DEVICES");
  b.cuda_visible_devices = cvd ? *cvd : "(unset)";
  const std::string where = fmt::format("host {} local rank {} of {} ({})", host, b.local.rank, b.local.size, b.local.source);
  if (visible <= 0)
    throw UserError(fmt::format("device = \"cuda\" but no GPU is visible on {} (CUDA_VISIBLE_DEVICES={}): "
                                "give each rank a GPU (srun --gpus-per-task=1, or fewer ranks) or use device = \"cpu\"",
                                where, b.cuda_visible_devices));
  // Bound to exactly one device by the launcher (Slurm's --gpus-per-task=1 binding) or the
  // user: the other ranks of the node were given their own.
  if (cvd && listed_devices(*cvd) == 1 && visible == 1) {
    b.device_index = 0;
    b.reason = fmt::format("this rank is bound to one GPU (CUDA_VISIBLE_DEVICES={})", *cvd);
    return b;
  }
  if (static_cast<long>(visible) * runs_per_gpu < b.local.size)
    throw UserError(fmt::format(
        "{}: {} rank(s) on this node but {} visible GPU(s) (CUDA_VISIBLE_DEVICES={}) at runs_per_gpu = {}: lrbench "
        "drives at most runs_per_gpu ranks per GPU; start at most {} rank(s) per node, raise [sweep] runs_per_gpu, or "
        "bind one GPU to each rank (srun --gpus-per-task=1)",
        where, b.local.size, visible, b.cuda_visible_devices, runs_per_gpu, static_cast<long>(visible) * runs_per_gpu));
  // Round robin: with fewer ranks than runs_per_gpu × devices, every device gets its share.
  b.device_index = b.local.rank % visible;
  b.reason = runs_per_gpu == 1 ? fmt::format("local rank {} of {} on {} visible GPU(s)", b.local.rank, b.local.size, visible)
                               : fmt::format("local rank {} of {} on {} visible GPU(s), up to {} ranks a GPU", b.local.rank,
                                             b.local.size, visible, runs_per_gpu);
  return b;
}

std::vector<std::string> shared_gpus(const std::vector<std::string>& rank_gpu_ids, int runs_per_gpu) {
  std::map<std::string, std::vector<std::size_t>> ranks_of;
  for (std::size_t r = 0; r < rank_gpu_ids.size(); ++r) ranks_of[rank_gpu_ids[r]].push_back(r);
  std::vector<std::string> out;
  for (const auto& [id, ranks] : ranks_of) {
    if (ranks.size() <= static_cast<std::size_t>(std::max(1, runs_per_gpu))) continue;
    const auto slash = id.find('/');
    out.push_back(fmt::format("host {} GPU {}: ranks {}", id.substr(0, slash),
                              slash == std::string::npos ? "?" : id.substr(slash + 1), fmt::join(ranks, ", ")));
  }
  return out;
}

int ranks_on_gpu_of(const std::vector<std::string>& rank_gpu_ids, std::size_t rank) {
  LRB_CHECK(rank < rank_gpu_ids.size(), "a rank of the job");
  return static_cast<int>(std::count(rank_gpu_ids.begin(), rank_gpu_ids.end(), rank_gpu_ids[rank]));
}

}  // namespace lrb
