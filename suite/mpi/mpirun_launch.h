#pragma once
// `lrbench run --ranks N`: this process starts `mpirun -np N lrbench run ...` and stays its
// parent. Open MPI's mpirun turns a SIGTERM or SIGINT of its own into an abort and exits 1,
// whatever its ranks did; SIGUSR1 it forwards to every rank. So the parent catches the stop
// signals and hands mpirun a SIGUSR1: every rank checkpoints and exits 3, and so do mpirun
// and this process. mpirun runs in its own process group, so a terminal's Ctrl-C reaches
// the parent alone.
#include <string>
#include <vector>

namespace lrb {

// Runs mpirun with `mpirun_args` (after "mpirun") and returns the exit code to give:
// mpirun's own (3 when the ranks were stopped). Throws UserError when mpirun cannot start.
int run_under_mpirun(const std::vector<std::string>& mpirun_args);

}  // namespace lrb
