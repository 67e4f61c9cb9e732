#include "suite/cli/app.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "suite/cli/command.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/simd_level.h"
#include "suite/core/stop_flag.h"
#include "suite/core/version.h"

namespace lrb {

std::vector<CommandSetup>& command_setups() {
  static std::vector<CommandSetup> setups;
  return setups;
}

int cli_main(int argc, char** argv) {
  CLI::App app{"lrbench: matched-seed, multi-run benchmarks of long-context encoders"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "print the version, git revision and dirty flag");
  CommandResult result;
  for (auto setup : command_setups()) setup(app, result);
  // Only `run` checkpoints on a stop signal, and `ab`, which asks its runs to; every other
  // command gets the default actions back (and a signal that came during start-up takes
  // effect now).
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (sub->get_name() != "run" && sub->get_name() != "ab") sub->preparse_callback([](std::size_t) { release_stop_handlers(); });
  try {
    select_simd_level();  // a bad LRB_SIMD_LEVEL stops every command here, exit 2
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitDone : kExitUsage;
  } catch (const UserError& e) {
    fmt::print(stderr, "lrbench: error: {}\n", e.what());
    return kExitUsage;
  } catch (const EnvironmentError& e) {
    fmt::print(stderr, "lrbench: error: {}\n", e.what());
    return kExitInternal;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path given that cannot be followed (a symbolic link loop, a missing or unreadable
    // folder) is the user's to fix (exit 2); any other file system failure is the machine's.
    const std::error_code c = e.code();
    const bool users = c == std::errc::too_many_symbolic_link_levels || c == std::errc::no_such_file_or_directory ||
                       c == std::errc::not_a_directory || c == std::errc::filename_too_long ||
                       c == std::errc::permission_denied;
    fmt::print(stderr, "lrbench: error: {}: {}{}\n", e.path1().string(), c.message(), users ? "; check the path given" : "");
    return users ? kExitUsage : kExitInternal;
  } catch (const std::exception& e) {
    fmt::print(stderr, "lrbench: internal error: {}\n", e.what());
    return kExitInternal;
  }
  if (version) {
    fmt::print("lrbench {} (git {}{})\n", lrbench_version(), git_revision(), git_dirty() ? ", dirty" : "");
    return kExitDone;
  }
  if (app.get_subcommands().empty()) {
    fmt::print("{}", app.help());
    return kExitUsage;
  }
  return result.exit_code;
}

}  // namespace lrb
