#pragma once
// `lrbench run --ranks N`: this process starts `mpirun -np N lrbench run ...` and stays its
// parent. Open MPI's mpirun turns a SIGTERM or SIGINT of its own into an abort and exits 1,
// whatever its ranks did; SIGUSR1 it forwards to every rank. So the parent catches the stop
// signals and hands every rank a SIGUSR1 (each as soon as it can take one: a stop in
// mpirun's first second is not lost): every rank checkpoints and exits 3, and so do mpirun
// and this process. mpirun runs in its own process group, so a terminal's Ctrl-C reaches
// the parent alone.
#include <string>
#include <vector>

namespace lrb {

// Runs mpirun with `mpirun_args` (after "mpirun"; `ranks` of them) and returns the exit
// code to give: mpirun's own (3 when the ranks were stopped), or 3 without starting it when
// a stop came first. Throws UserError when mpirun cannot start.
int run_under_mpirun(const std::vector<std::string>& mpirun_args, int ranks);

}  // namespace lrb
