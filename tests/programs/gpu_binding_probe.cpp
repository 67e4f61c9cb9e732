// The GPU lrbench's binding would give this task, under a real launcher, on a machine
// without GPUs (the multinode tests: tests/integration/multinode_test.cpp). The devices are
// the ones the launcher made visible: CUDA would count the entries of CUDA_VISIBLE_DEVICES,
// so that count stands in for cuda_device_count(); bind_gpu (suite/runtime/gpu_binding.h)
// then chooses as a GPU run would. Prints one line per task:
//   host n2 local 1 of 2 visible 0,1 device 1 physical 1 reason ...
// "physical" is the node's GPU the chosen device is (its entry of CUDA_VISIBLE_DEVICES);
// then, from rank 0, one "shared ..." line per GPU that more than one rank would drive, as
// the job's start-up check (shared_gpus) finds them from every rank's host and GPU.
// LRB_PROBE_RUNS_PER_GPU=k binds as [sweep] runs_per_gpu = k would (default 1).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "suite/core/errors.h"
#include "suite/mpi/mpi_session.h"
#include "suite/runtime/gpu_binding.h"

int main(int argc, char** argv) {
  lrb::MpiSession mpi(&argc, &argv);
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  std::vector<std::string> visible;
  std::stringstream in(cvd ? cvd : "");
  for (std::string id; std::getline(in, id, ',');)
    if (!id.empty()) visible.push_back(id);
  const char* k = std::getenv("LRB_PROBE_RUNS_PER_GPU");
  const int runs_per_gpu = k ? std::atoi(k) : 1;
  std::string line, id = mpi.host() + "/none";
  try {
    const lrb::GpuBinding b =
        lrb::bind_gpu(lrb::process_env(), mpi.local_rank(), mpi.local_size(), static_cast<int>(visible.size()), mpi.host(),
                      runs_per_gpu);
    line = "host " + mpi.host() + " local " + std::to_string(b.local.rank) + " of " + std::to_string(b.local.size) + " visible " +
           (cvd ? cvd : "(unset)") + " device " + std::to_string(b.device_index) + " physical " +
           visible.at(static_cast<std::size_t>(b.device_index)) + " reason " + b.reason;
    // What the job compares at its start (suite/sweep/gpu_setup.cpp: host and PCI bus id),
    // with the node's GPU number standing in for the bus id.
    id = mpi.host() + "/gpu" + visible.at(static_cast<std::size_t>(b.device_index));
  } catch (const lrb::UserError& e) {
    line = "host " + mpi.host() + " refused " + e.what();
  }
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  // Ranks that would drive one GPU: the job refuses to start (gpus_shared_by_ranks).
  const std::vector<std::string> ids = mpi.gather_to_all(id, 256);
  if (mpi.rank() == 0)
    for (const auto& shared : lrb::shared_gpus(ids, runs_per_gpu)) std::printf("shared %s\n", shared.c_str());
  std::fflush(stdout);
  return 0;
}
