// lrbench validate SPEC: check a sweep file and list its runs, without running anything.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in fmt/format.h only up to fmt 10)

#include <memory>

#include "suite/cli/command.h"
#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"
#include "suite/core/call_watch.h"
#include "suite/core/exit_codes.h"
#include "suite/core/text.h"

namespace lrb {
namespace {

int validate(const std::string& file) {
  const SweepSpec spec = load_sweep_file(file);
  set_call_time_limit(spec.sweep.step_time_limit);  // a trial forward at expansion is watched too
  const ExpandedSweep ex = expand_sweep(spec);
  // Pointers, not copies: a copy of every spec doubled what a large sweep's listing held.
  std::vector<const json*> specs;
  specs.reserve(ex.runs.size());
  for (const auto& r : ex.runs) specs.push_back(&r.spec);
  const auto varying = varying_paths(specs);
  if (const auto& d = spec.sweep.sequential)
    fmt::print("{}: sweep '{}' is valid: a sequential study of at most {} run(s): seeds = {{ {} }}, looks at {} seeds{}\n", file,
               spec.sweep.name, ex.runs.size(), d->text(), fmt::join(d->look_seeds(), ", "),
               spec.sweep.budget_seconds ? ", budget " + format_budget(*spec.sweep.budget_seconds) : std::string());
  else
    fmt::print("{}: sweep '{}' is valid: {} run(s)\n", file, spec.sweep.name, ex.runs.size());
  for (const auto& r : ex.runs) fmt::print("{}  {}\n", r.key, describe_run(r, varying));
  if (!ex.derivations.empty()) {
    fmt::print("what the budgets and size matches made of each setting:\n");
    for (const auto& d : ex.derivations) fmt::print("  {}\n", d);
  }
  if (!ex.skipped.empty()) {
    fmt::print("{} combination(s) skipped:\n", ex.skipped.size());
    for (const auto& s : ex.skipped) fmt::print("  {}: {}\n", s.what, s.reason);
  }
  if (!spec.claims.empty()) {
    fmt::print("{} claim(s), each given a verdict by lrbench report:\n", spec.claims.size());
    for (const auto& c : spec.claims) {
      fmt::print("  {} ({}, {}{}): A = {}", c.name, claim_kind_name(c.kind), c.metric,
                 c.kind == ClaimKind::Dominates ? ", cost " + c.cost : std::string(), c.a.label);
      if (c.kind != ClaimKind::Scaling && !c.b.match.empty()) fmt::print(", B = {}", c.b.label);
      if (c.kind == ClaimKind::Variance) fmt::print(", V({}) / V({})", join(c.of, ", "), c.against.empty() ? "all" : join(c.against, ", "));
      fmt::print("\n");
    }
  }
  return kExitDone;
}

void add_validate_command(CLI::App& app, CommandResult& result) {
  auto file = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("validate", "check a sweep file; print the number of runs and one line per run (run key and what it is)");
  cmd->add_option("spec", *file, "the sweep file (TOML)")->required()->check(CLI::ExistingFile);
  cmd->callback([file, &result] { result.exit_code = validate(*file); });
}

LRB_REGISTER_COMMAND(add_validate_command);

}  // namespace
}  // namespace lrb
