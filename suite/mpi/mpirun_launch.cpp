#include "suite/mpi/mpirun_launch.h"

#include <signal.h>

#include <cstring>

#include "suite/core/child_process.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/stop_flag.h"

namespace lrb {

int run_under_mpirun(const std::vector<std::string>& mpirun_args) {
  ChildOptions options;
  options.argv = {"mpirun"};
  options.argv.insert(options.argv.end(), mpirun_args.begin(), mpirun_args.end());
  // Its own process group: a terminal's Ctrl-C reaches lrbench, which forwards a stop.
  options.own_process_group = true;
  int error = 0;
  auto mpirun = ChildProcess::start(options, &error);
  if (!mpirun) throw UserError(std::string("cannot run mpirun: ") + std::strerror(error) + " (is Open MPI installed?)");
  bool forwarded = false;
  const pid_t pid = mpirun->pid();
  const ChildExit exit = mpirun->wait(std::nullopt, [&] {
    if (stop_requested() && !forwarded) {
      ::kill(pid, SIGUSR1);  // mpirun forwards it: every rank checkpoints and exits 3
      forwarded = true;
    }
  });
  if (exit.exit_code >= 0) return exit.exit_code;
  return kExitInternal;  // mpirun itself was killed
}

}  // namespace lrb
