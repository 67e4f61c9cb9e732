#pragma once
// Runs a program with a fixed argument vector (no shell: nothing it is given is ever
// parsed as shell syntax) and collects what it prints. For sbatch and its kin.
#include <string>
#include <vector>

namespace lrb {

struct ProgramResult {
  int exit_code = -1;  // 128 + signal when killed by one
  std::string out;     // standard output
  std::string err;     // standard error
};

// argv[0] is looked up on PATH. Throws UserError when it cannot be started.
ProgramResult run_program(const std::vector<std::string>& argv);

}  // namespace lrb
