#pragma once
namespace lrb {
// The lrbench command line; returns the process exit code (suite/core/exit_codes.h).
int cli_main(int argc, char** argv);
}  // namespace lrb
