#include "suite/core/run_program.h"

#include <cstring>

#include "suite/core/child_process.h"
#include "suite/core/errors.h"

namespace lrb {

ProgramResult run_program(const std::vector<std::string>& argv) {
  LRB_CHECK(!argv.empty(), "run_program needs a program");
  ChildOptions options;
  options.argv = argv;
  options.output = ChildOutput::capture;
  int error = 0;
  auto child = ChildProcess::start(options, &error);
  if (!child) throw UserError("cannot run " + argv[0] + ": " + std::strerror(error) + " (is it installed and on PATH?)");
  ChildExit exit = child->wait();
  return ProgramResult{exit.status(), std::move(exit.out), std::move(exit.err)};
}

}  // namespace lrb
