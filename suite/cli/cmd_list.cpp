// lrbench list [models|tasks]: every registered model and task with its options.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>

#include "suite/cli/command.h"
#include "suite/core/exit_codes.h"
#include "suite/core/text.h"
#include "suite/registry/registry.h"

namespace lrb {
namespace {

std::string default_text(const OptionSpec& o) {
  if (o.derived) return "(derived)";
  if (o.default_value.is_null()) return "(required)";
  return o.default_value.dump();
}

void print_schema(const OptionSchema& schema) {
  for (const auto& o : schema.options) {
    std::string extra;
    if (!o.choices.empty()) extra = " {" + join(o.choices, ", ") + "}";
    fmt::print("    {:<16} {:<22} default {:<12} {}{}\n", o.name, type_name(o.type), default_text(o), o.help, extra);
  }
}

int list(const std::string& what) {
  if (what.empty() || what == "models") {
    fmt::print("models:\n");
    for (const auto& [name, e] : ModelRegistry::instance().entries()) {
      std::vector<std::string> kinds;
      for (auto m : e.modalities) kinds.push_back(modality_name(m));
      fmt::print("  {} — {} [inputs: {}]\n", name, e.summary, join(kinds, ", "));
      print_schema(e.schema);
      if (!e.inference.options.empty()) {
        fmt::print("    inference settings ([[variant]] tables: the trained weights evaluated again):\n");
        print_schema(e.inference);
      }
    }
  }
  if (what.empty() || what == "tasks") {
    fmt::print("tasks:\n");
    for (const auto& [name, e] : TaskRegistry::instance().entries()) {
      fmt::print("  {} — {}{}\n", name, e.summary, e.uses_seq_len ? " [seq_len required]" : " [fixed size]");
      print_schema(e.schema);
    }
  }
  return kExitDone;
}

void add_list_command(CLI::App& app, CommandResult& result) {
  auto what = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("list", "list the registered models and tasks with their options, types and defaults");
  cmd->add_option("what", *what, "models or tasks (default: both)")->check(CLI::IsMember({"models", "tasks"}));
  cmd->callback([what, &result] { result.exit_code = list(*what); });
}

LRB_REGISTER_COMMAND(add_list_command);

}  // namespace
}  // namespace lrb
