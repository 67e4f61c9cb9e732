#include "suite/mpi/mpi_session.h"

#include <mpi.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/files.h"

namespace lrb {

namespace {
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  int x = 0;
  const char* last = v + std::strlen(v);
  const auto [end, ec] = std::from_chars(v, last, x);  // exact: no wrap-around past int's range
  return (ec == std::errc() && end == last) ? x : fallback;
}
bool env_set(const char* name) { return std::getenv(name) != nullptr; }
thread_local int g_rank_for_messages = 0;
}  // namespace

bool launched_under_mpi() {
  return env_set("OMPI_COMM_WORLD_SIZE") || env_set("PMIX_RANK") || env_set("PMI_RANK") || env_set("PMI_SIZE");
}

void mpi_call_failed(const char* call, int code, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  MPI_Error_string(code, text, &len);
  std::fprintf(stderr, "lrbench: MPI call failed on host %s rank %d: %s -> %s (%s:%d)\n", host_name().c_str(),
               g_rank_for_messages, call, text, file, line);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

MpiSession::MpiSession(int* argc, char*** argv) : host_(host_name()) {
  // Launched directly by srun (not by an mpirun inside a Slurm job, which sets
  // OMPI_COMM_WORLD_SIZE itself): the MPI world must be the Slurm step.
  const bool direct_srun = env_set("SLURM_JOB_ID") && env_set("SLURM_STEP_ID") && !env_set("OMPI_COMM_WORLD_SIZE");
  const int slurm_ntasks = env_int("SLURM_NTASKS", 1);
  if (direct_srun && slurm_ntasks > 1 && !env_set("PMIX_RANK")) {
    const char* type = std::getenv("SLURM_MPI_TYPE");
    throw UserError("this Slurm step has " + std::to_string(slurm_ntasks) + " tasks but no PMIx wiring (--mpi=" +
                    std::string(type ? type : "none") +
                    "): start lrbench with 'srun --mpi=pmix' (Debian's Open MPI starts only under PMIx); nothing was run");
  }
  if (launched_under_mpi()) {
    int provided = 0;
    LRB_MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    mpi_ = true;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    LRB_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
    LRB_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));
    g_rank_for_messages = rank_;
    if (provided < MPI_THREAD_MULTIPLE && size_ > 1) {
      std::fprintf(stderr, "lrbench: host %s rank %d: the MPI library does not provide MPI_THREAD_MULTIPLE\n",
                   host_.c_str(), rank_);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm node;
    LRB_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
    LRB_MPI_CHECK(MPI_Comm_rank(node, &local_rank_));
    LRB_MPI_CHECK(MPI_Comm_size(node, &local_size_));
    MPI_Comm_free(&node);
  }
  // Under srun every task runs this program: without PMIx wiring each would believe it is
  // alone and run the whole sweep. Refuse unless the MPI world is the Slurm step.
  if (direct_srun && size_ != slurm_ntasks) {
    const std::string msg =
        "this Slurm step has SLURM_NTASKS=" + std::to_string(slurm_ntasks) + " but the MPI world has " +
        std::to_string(size_) + " rank(s): start lrbench with 'srun --mpi=pmix' (Debian's Open MPI needs PMIx)";
    if (mpi_) {
      MPI_Finalize();
      mpi_ = false;
    }
    throw UserError(msg);
  }
}

MpiSession::~MpiSession() {
  if (mpi_) MPI_Finalize();
}

std::string MpiSession::label() const {
  return "host " + host_ + " rank " + std::to_string(rank_) + "/" + std::to_string(size_);
}

void MpiSession::barrier_sleeping() const {
  if (!mpi_ || size_ == 1) return;
  MPI_Request req;
  LRB_MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
  int done = 0;
  while (true) {
    LRB_MPI_CHECK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int MpiSession::max_over_ranks(int value) const {
  if (!mpi_ || size_ == 1) return value;
  barrier_sleeping();
  int out = value;
  LRB_MPI_CHECK(MPI_Allreduce(&value, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  return out;
}

std::vector<std::int64_t> MpiSession::max_over_ranks(std::vector<std::int64_t> values) const {
  if (!mpi_ || size_ == 1) return values;
  barrier_sleeping();
  std::vector<std::int64_t> out(values.size());
  LRB_MPI_CHECK(MPI_Allreduce(values.data(), out.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD));
  return out;
}

void MpiSession::broadcast_from_rank0(std::vector<std::int64_t>& values) const {
  if (!mpi_ || size_ == 1) return;
  std::int64_t n = static_cast<std::int64_t>(values.size());
  LRB_MPI_CHECK(MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD));
  values.resize(static_cast<std::size_t>(n));
  if (n > 0) LRB_MPI_CHECK(MPI_Bcast(values.data(), static_cast<int>(n), MPI_INT64_T, 0, MPI_COMM_WORLD));
}

std::vector<std::string> MpiSession::gather_to_all(const std::string& text, std::size_t width) const {
  if (!mpi_ || size_ == 1) return {text.substr(0, width - 1)};
  std::string slot = text.substr(0, width - 1);
  slot.resize(width, '\0');  // NUL-terminated within its slot
  std::vector<char> all(width * static_cast<std::size_t>(size_));
  LRB_MPI_CHECK(MPI_Allgather(slot.data(), static_cast<int>(width), MPI_CHAR, all.data(), static_cast<int>(width), MPI_CHAR, MPI_COMM_WORLD));
  std::vector<std::string> texts;
  for (int r = 0; r < size_; ++r) texts.emplace_back(all.data() + static_cast<std::ptrdiff_t>(r) * static_cast<std::ptrdiff_t>(width));
  return texts;
}

void MpiSession::abort_job(const std::string& why) const {
  std::fprintf(stderr, "lrbench: %s: %s; aborting the job\n", label().c_str(), why.c_str());
  std::fflush(stderr);
  if (mpi_) MPI_Abort(MPI_COMM_WORLD, kExitInternal);
  std::abort();
}

std::string mpi_library_version() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  MPI_Get_library_version(buf, &len);
  std::string s(buf, static_cast<std::size_t>(len));
  const auto nl = s.find_first_of("\n,");
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace lrb
