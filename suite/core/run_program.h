#pragma once
// Runs a program to its end and collects what it prints (sbatch and its kin): a
// ChildProcess (child_process.h) with its output captured.
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
