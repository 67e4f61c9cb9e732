#include "suite/cli/app.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "suite/core/exit_codes.h"
#include "suite/core/version.h"

namespace lrb {

int cli_main(int argc, char** argv) {
  CLI::App app{"lrbench: matched-seed, multi-run benchmarks of long-context encoders"};
  bool version = false;
  app.add_flag("--version", version, "print the version, git revision and dirty flag");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitDone : kExitUsage;
  }
  if (version) {
    fmt::print("lrbench {} (git {}{})\n", lrbench_version(), git_revision(), git_dirty() ? ", dirty" : "");
    return kExitDone;
  }
  fmt::print("{}", app.help());
  return kExitDone;
}

}  // namespace lrb
