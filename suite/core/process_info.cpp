#include "suite/core/process_info.h"

#include <cstdlib>
#include <string>

#include "suite/core/files.h"

namespace lrb {

namespace {
bool parse_rank(const char* text, int& out) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < 0 || v > 1'000'000'000L) return false;
  out = static_cast<int>(v);
  return true;
}
}  // namespace

int process_rank() {
  // Open MPI's own variable first: under srun --mpi=pmix both may be set and agree.
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    int rank = 0;
    if (parse_rank(std::getenv(name), rank)) return rank;
  }
  return 0;
}

std::string process_label() { return "host " + host_name() + " rank " + std::to_string(process_rank()); }

}  // namespace lrb
