#pragma once
// Subcommands plug into the CLI by registration: one file per command,
//
//   LRB_REGISTER_COMMAND(add_report_command);
//
// where add_report_command(CLI::App& app, CommandResult& result) adds the subcommand and
// sets result.exit_code from its callback. suite/cli/ is compiled as objects
// (lrb_cli, cmake/layers.cmake), so no registration is dropped by the linker.
#include <functional>
#include <vector>

#include "suite/core/macros.h"

namespace CLI {
class App;
}

namespace lrb {

struct CommandResult {
  int exit_code = 0;
};

using CommandSetup = void (*)(CLI::App& app, CommandResult& result);

std::vector<CommandSetup>& command_setups();
inline bool register_command(CommandSetup setup) {
  command_setups().push_back(setup);
  return true;
}

}  // namespace lrb

#define LRB_REGISTER_COMMAND(fn) \
  static const bool LRB_CONCAT(lrb_command_registered_, __LINE__) = ::lrb::register_command(&fn)
