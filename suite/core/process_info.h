#pragma once
// Who this process is, for messages: "host H rank R". Read from the launcher's environment
// so it works before (and without) MPI_Init: Open MPI, PMIx (srun --mpi=pmix), Slurm.
#include <string>

namespace lrb {

// OMPI_COMM_WORLD_RANK, else PMIX_RANK, else SLURM_PROCID; 0 when none is set or parses.
int process_rank();
// "host <hostname> rank <rank>".
std::string process_label();

}  // namespace lrb
