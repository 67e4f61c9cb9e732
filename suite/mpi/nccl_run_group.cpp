#include "suite/mpi/nccl_run_group.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#ifdef LRB_WITH_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>
#endif

#include "suite/core/errors.h"

namespace lrb {

namespace {

double timeout_from_environment() {
  const char* v = std::getenv("LRB_NCCL_TIMEOUT_SECONDS");
  if (!v || !*v) return 600;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  return end && *end == '\0' && s > 0 ? s : 600;
}

// Busy for the first 200 µs (an exchange between members that arrive together ends within
// them), then sleeping in growing naps, so a member waiting for another leaves it the core.
class PoliteWait {
 public:
  explicit PoliteWait(double timeout_seconds)
      : start_(std::chrono::steady_clock::now()), timeout_(std::chrono::duration<double>(timeout_seconds)) {}
  // False once the timeout has passed.
  bool pause() {
    const auto waited = std::chrono::steady_clock::now() - start_;
    if (waited > timeout_) return false;
    if (waited > std::chrono::microseconds(200)) {
      std::this_thread::sleep_for(nap_);
      nap_ = std::min(nap_ * 2, std::chrono::microseconds(2000));
    }
    return true;
  }

 private:
  std::chrono::steady_clock::time_point start_;
  std::chrono::duration<double> timeout_;
  std::chrono::microseconds nap_{20};
};

}  // namespace

bool nccl_compiled() {
#ifdef LRB_WITH_NCCL
  return true;
#else
  return false;
#endif
}

std::string nccl_version() {
#ifdef LRB_WITH_NCCL
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  // Since NCCL 2.9 the code is major * 10000 + minor * 100 + patch.
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
#else
  return "";
#endif
}

std::string chosen_exchange(const std::string& requested, const std::string& device) {
  if (requested != "auto") return requested;
  return device == "cuda" && nccl_compiled() ? "nccl" : "mpi";
}

#ifdef LRB_WITH_NCCL

struct NcclRunGroup::Comm {
  ncclComm_t comm = nullptr;
  int device = -1;
};

namespace {

std::string nccl_error(ncclResult_t r, ncclComm_t comm) {
  std::string text = ncclGetErrorString(r);
  if (const char* last = ncclGetLastError(comm); last && *last) text += fmt::format(" ({})", last);
  return text;
}

// A nonblocking communicator's call may return ncclInProgress: its state then settles
// later. Waits for that (within `wait`'s timeout) and returns the final result.
ncclResult_t settle(ncclResult_t r, ncclComm_t comm, PoliteWait& wait, bool& timed_out) {
  timed_out = false;
  while (r == ncclInProgress) {
    if (!wait.pause()) {
      timed_out = true;
      return r;
    }
    if (ncclCommGetAsyncError(comm, &r) != ncclSuccess) return ncclSystemError;
  }
  return r;
}

}  // namespace

NcclRunGroup::NcclRunGroup(MpiRunGroup& members, const MpiSession& session)
    : members_(members), session_(session), timeout_seconds_(timeout_from_environment()) {}

NcclRunGroup::~NcclRunGroup() { close(/*clean=*/true); }

nlohmann::json NcclRunGroup::describe() const {
  nlohmann::json d = members_.describe();
  d["exchange"] = "nccl";
  d["nccl_version"] = nccl_version();
  return d;
}

std::string NcclRunGroup::create(int device, const void* unique_id) {
  if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
    return fmt::format("{}: cudaSetDevice({}) failed: {}", session_.label(), device, cudaGetErrorString(e));
  ncclUniqueId id;
  std::memcpy(&id, unique_id, sizeof id);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // so that a member that never arrives ends in a timeout, not a hang
  auto made = std::make_unique<Comm>();
  made->device = device;
  ncclResult_t r = ncclCommInitRankConfig(&made->comm, size(), id, rank(), &config);
  PoliteWait wait(timeout_seconds_);
  bool timed_out = false;
  if (made->comm) r = settle(r, made->comm, wait, timed_out);
  if (r == ncclSuccess) {
    comm_ = std::move(made);
    return "";
  }
  std::string why = timed_out ? fmt::format("timed out after {} s (LRB_NCCL_TIMEOUT_SECONDS)", timeout_seconds_)
                              : nccl_error(r, made->comm);
  if (made->comm) ncclCommAbort(made->comm);
  return fmt::format("{}: ncclCommInitRankConfig on device {} failed: {}", session_.label(), device, why);
}

std::string NcclRunGroup::open_device_exchange(int device) {
  if (comm_ && comm_->device == device) return "";
  if (!failure_.empty()) return failure_;
  close(/*clean=*/true);  // one made for another device
  // [0: member 0 made the id | the id | member 0's error text]
  struct Hello {
    int ok = 0;
    ncclUniqueId id;
    char why[512] = {0};
  } hello;
  if (rank() == 0) {
    if (const ncclResult_t r = ncclGetUniqueId(&hello.id); r == ncclSuccess) hello.ok = 1;
    else std::snprintf(hello.why, sizeof hello.why, "%s: ncclGetUniqueId failed: %s", session_.label().c_str(), ncclGetErrorString(r));
  }
  members_.broadcast_from_leader(&hello, sizeof hello);
  const std::string mine = hello.ok ? create(device, &hello.id) : (rank() == 0 ? std::string(hello.why) : "");
  const std::vector<std::string> texts = members_.gather_text(mine);
  for (std::size_t m = 0; m < texts.size(); ++m)
    if (!texts[m].empty()) {
      close(/*clean=*/false);
      failure_ = fmt::format("the run's {}-rank group could not create its NCCL communicator (member {}: {}); the group's "
                             "later runs fail with this reason: set exchange = \"mpi\" in [sweep] to sum through host memory",
                             size(), m, texts[m]);
      return failure_;
    }
  return "";
}

void NcclRunGroup::sum_on_device(void* data, std::size_t count, Element type, void* cuda_stream) {
  LRB_CHECK(comm_ != nullptr, "sum_on_device before open_device_exchange succeeded");
  const ncclDataType_t nccl_type = type == Element::Float64 ? ncclFloat64 : ncclFloat32;
  auto stream = static_cast<cudaStream_t>(cuda_stream);
  PoliteWait wait(timeout_seconds_);
  bool timed_out = false;
  // Reduced to member 0 and broadcast from it, as the MPI exchange: every member then holds
  // member 0's bits, whatever algorithm NCCL picks.
  ncclResult_t r = ncclReduce(data, data, count, nccl_type, ncclSum, 0, comm_->comm, stream);
  if ((r = settle(r, comm_->comm, wait, timed_out)) != ncclSuccess)
    fail("ncclReduce", timed_out ? "timed out" : nccl_error(r, comm_->comm));
  r = ncclBroadcast(data, data, count, nccl_type, 0, comm_->comm, stream);
  if ((r = settle(r, comm_->comm, wait, timed_out)) != ncclSuccess)
    fail("ncclBroadcast", timed_out ? "timed out" : nccl_error(r, comm_->comm));
  // Complete before returning: the stream is polled so that an error NCCL reports (a member
  // gone) or a timeout ends the wait instead of a hang in cudaStreamSynchronize.
  for (;;) {
    const cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) fail("cudaStreamQuery", cudaGetErrorString(e));
    ncclResult_t state = ncclSuccess;
    if (ncclCommGetAsyncError(comm_->comm, &state) != ncclSuccess || (state != ncclSuccess && state != ncclInProgress))
      fail("ncclCommGetAsyncError", nccl_error(state, comm_->comm));
    if (!wait.pause()) fail("the gradient exchange", fmt::format("did not finish within {} s (LRB_NCCL_TIMEOUT_SECONDS)", timeout_seconds_));
  }
}

void NcclRunGroup::close(bool clean) {
  if (!comm_) return;
  ncclComm_t comm = comm_->comm;
  comm_.reset();
  if (clean) {
    // Finalize flushes what is queued; on a nonblocking communicator it settles later.
    PoliteWait wait(timeout_seconds_);
    bool timed_out = false;
    if (settle(ncclCommFinalize(comm), comm, wait, timed_out) == ncclSuccess && ncclCommDestroy(comm) == ncclSuccess) return;
  }
  ncclCommAbort(comm);
}

void NcclRunGroup::fail(const std::string& call, const std::string& why) {
  close(/*clean=*/false);
  session_.abort_job(fmt::format("NCCL exchange of a data-parallel group failed: {}: {}; the job ends (run it again to "
                                 "resume from the runs' checkpoints)",
                                 call, why));
}

#else  // without LRB_WITH_NCCL: every run that asks for NCCL is told it is not built in

struct NcclRunGroup::Comm {};

NcclRunGroup::NcclRunGroup(MpiRunGroup& members, const MpiSession& session)
    : members_(members), session_(session), timeout_seconds_(timeout_from_environment()) {}

NcclRunGroup::~NcclRunGroup() = default;

nlohmann::json NcclRunGroup::describe() const {
  nlohmann::json d = members_.describe();
  d["exchange"] = "nccl";
  return d;
}

std::string NcclRunGroup::create(int, const void*) { return "NCCL is not built in"; }

std::string NcclRunGroup::open_device_exchange(int) {
  return "this lrbench was built without NCCL (LRB_WITH_NCCL off): build it with -DLRB_WITH_CUDA=ON -DLRB_WITH_NCCL=ON, "
         "or set exchange = \"mpi\" in [sweep]";
}

void NcclRunGroup::sum_on_device(void*, std::size_t, Element, void*) {
  LRB_CHECK(false, "sum_on_device in a build without NCCL");
}

void NcclRunGroup::close(bool) {}

void NcclRunGroup::fail(const std::string& call, const std::string& why) {
  session_.abort_job(call + ": " + why);
}

#endif

}  // namespace lrb
