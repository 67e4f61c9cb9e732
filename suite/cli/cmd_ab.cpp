// lrbench ab SPEC --baseline A --candidate B --out DIR: one sweep run by two builds on this
// machine, interleaved cell by cell (A B, then B A, ...) in the same process layout, then
// compared as `lrbench compare` compares (docs/comparing-builds.md, "lrbench ab").
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/cli/command.h"
#include "suite/cli/report_args.h"
#include "suite/core/child_process.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/files.h"
#include "suite/core/sha256.h"
#include "suite/core/stop_flag.h"
#include "suite/core/text.h"
#include "suite/report/compare.h"
#include "suite/store/output_paths.h"
#include "suite/store/results_layout.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Args {
  std::string spec, baseline, candidate, out;
  std::string ranks, threads, data_cache;
  std::vector<std::string> margins;
  double alpha = 0.05;
  std::string fail_on = "never";
  ReportArgs output;
};

// One build: its launcher, what `--version` says, and a digest of its programs (the
// launcher and the programs beside it), so that a rebuilt side is noticed on resume.
struct Build {
  std::string role;  // "baseline" or "candidate"
  fs::path program;
  std::string version;
  std::string digest;
};

ChildExit run_captured(const std::vector<std::string>& argv, std::chrono::seconds timeout) {
  ChildOptions o;
  o.argv = argv;
  o.output = ChildOutput::capture;
  int error = 0;
  auto child = ChildProcess::start(o, &error);
  if (!child) throw UserError("cannot start " + argv[0] + ": " + std::strerror(error));
  return child->wait(std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
}

std::string digest_of_programs(const fs::path& launcher) {
  Sha256 sha;
  for (const char* name : {"", "-core", "-results"}) {
    const fs::path p = launcher.string() + name;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) continue;
    std::ifstream in(p, std::ios::binary);
    std::string block(1 << 20, '\0');
    while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0)
      sha.update(std::string_view(block.data(), static_cast<std::size_t>(in.gcount())));
  }
  return sha.hex();
}

Build check_build(const std::string& given, const std::string& role) {
  Build b{role, given, "", ""};
  std::error_code ec;
  if (fs::is_directory(b.program, ec)) b.program /= "lrbench";  // a build folder
  struct ::stat st {};
  if (::stat(b.program.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 0111) == 0)
    throw UserError("--" + role + " " + given + ": not an executable file; give an lrbench program or its build folder");
  b.program = fs::absolute(b.program);
  const ChildExit v = run_captured({b.program.string(), "--version"}, std::chrono::seconds(60));
  if (v.status() != 0 || v.out.rfind("lrbench ", 0) != 0)
    throw UserError("--" + role + " " + given + " is not an lrbench build: `" + b.program.string() + " --version` " +
                    (v.status() != 0 ? "exited " + std::to_string(v.status()) : "printed \"" + v.out.substr(0, 80) + "\""));
  b.version = v.out.substr(0, v.out.find('\n'));
  const ChildExit help = run_captured({b.program.string(), "run", "--help"}, std::chrono::seconds(60));
  if (help.out.find("--only") == std::string::npos)
    throw UserError("--" + role + " " + given + " (" + b.version + ") cannot run one cell at a time (its `run` has no --only: "
                    "a build from before `lrbench ab`); build that revision with this one's suite/sweep/run_selection.*, "
                    "or compare two folders it ran whole with `lrbench compare`");
  b.digest = digest_of_programs(b.program);
  return b;
}

// A run of `validate`'s list: "<key>  <task>/<len> <entrant> seed <n>".
struct ListedRun {
  std::string key, label;
};

std::vector<ListedRun> runs_of(const Build& b, const std::string& spec) {
  const ChildExit v = run_captured({b.program.string(), "validate", spec}, std::chrono::seconds(600));
  if (v.status() != 0)
    throw UserError("`" + b.program.string() + " validate " + spec + "` (the " + b.role + ") exited " + std::to_string(v.status()) +
                    ": " + v.err.substr(0, 2000));
  std::vector<ListedRun> out;
  std::istringstream lines(v.out);
  for (std::string line; std::getline(lines, line);)
    if (line.size() > 66 && line.find_first_not_of("0123456789abcdef") == 64 && line.compare(64, 2, "  ") == 0)
      out.push_back({line.substr(0, 64), line.substr(66)});
  if (out.empty()) throw UserError("`" + b.program.string() + " validate " + spec + "` listed no run");
  return out;
}

// The first run the two builds see differently, or "".
std::string first_difference(const std::vector<ListedRun>& a, const std::vector<ListedRun>& b) {
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (a[i].key != b[i].key)
      return fmt::format("run {} is {} ({}) for the baseline and {} ({}) for the candidate", i + 1, a[i].key.substr(0, 12),
                         a[i].label, b[i].key.substr(0, 12), b[i].label);
  if (a.size() != b.size()) return fmt::format("the baseline lists {} runs, the candidate {}", a.size(), b.size());
  return "";
}

// The sweep's cells in its order: runs whose labels agree but for the seed.
std::vector<std::vector<std::string>> cells_of(const std::vector<ListedRun>& runs) {
  std::vector<std::vector<std::string>> cells;
  std::map<std::string, std::size_t> index;
  for (const ListedRun& r : runs) {
    const auto seed = r.label.rfind(" seed ");
    const std::string cell = seed == std::string::npos ? r.label : r.label.substr(0, seed);
    const auto [it, added] = index.emplace(cell, cells.size());
    if (added) cells.emplace_back();
    cells[it->second].push_back(r.key);
  }
  return cells;
}

// DIR/ab.json: the builds a study started with. A side rebuilt between sessions would mix two
// builds in one folder: refused.
void record_builds(const fs::path& dir, const std::string& spec, const Build& a, const Build& b) {
  const fs::path file = dir / "ab.json";
  const auto entry = [](const Build& x) { return json{{"program", x.program.string()}, {"version", x.version}, {"sha256", x.digest}}; };
  std::error_code ec;
  if (fs::exists(file, ec)) {
    const json was = json::parse(read_user_file(file, 1 << 20, "the A/B record"), nullptr, false);
    for (const Build* x : {&a, &b})
      if (was.is_discarded() || !was.contains(x->role) || was[x->role].value("sha256", "") != x->digest)
        throw UserError("--out " + dir.string() + " was begun with another " + x->role + " build (" +
                        (was.is_discarded() ? std::string("unreadable ab.json") : was[x->role].value("version", "?")) +
                        "; now " + x->version + "): finish it with the same builds, or give a new --out");
    return;
  }
  fs::create_directories(dir);
  write_file_atomic(file, json{{"spec", spec}, {"baseline", entry(a)}, {"candidate", entry(b)}}.dump(2) + "\n");
}

bool cell_done(const fs::path& folder, const std::vector<std::string>& keys) {
  for (const std::string& k : keys) {
    std::error_code ec;
    if (!fs::exists(ResultsLayout(folder).run_file(k), ec)) return false;
  }
  return true;
}

// One build's `run` on one cell; its progress goes to this terminal. A stop signal to `ab`
// goes on to it (it checkpoints and exits 3).
int run_cell(const Build& b, const Args& a, const fs::path& folder, const std::vector<std::string>& keys) {
  ChildOptions o;
  o.argv = {b.program.string(), "run", a.spec, "--out", folder.string(), "--only", join(keys, ",")};
  if (!a.ranks.empty()) o.argv.insert(o.argv.end(), {"--ranks", a.ranks});
  if (!a.threads.empty()) o.argv.insert(o.argv.end(), {"--threads", a.threads});
  if (!a.data_cache.empty()) o.argv.insert(o.argv.end(), {"--data-cache", a.data_cache});
  o.own_process_group = true;  // a terminal's Ctrl-C reaches ab, which asks the run to stop
  int error = 0;
  auto child = ChildProcess::start(o, &error);
  if (!child) throw EnvironmentError("cannot start " + b.program.string() + ": " + std::strerror(error));
  bool forwarded = false;
  const ChildExit e = child->wait(std::nullopt, [&] {
    if (stop_requested() && !forwarded) {
      ::kill(child->pid(), SIGTERM);
      forwarded = true;
    }
  });
  return e.status();
}

int ab(const Args& a) {
  CompareOptions options;
  options.alpha = a.alpha;
  for (const std::string& m : a.margins) {
    auto [figure, margin] = parse_margin(m);
    options.margins.insert_or_assign(figure, margin);
  }
  const fs::path dir = a.out;
  refuse_results_folder_output(dir, "--out");
  const fs::path side_a = dir / "baseline", side_b = dir / "candidate";
  const ReportOutput out = report_output(a.output, {side_a, side_b});
  const Build build_a = check_build(a.baseline, "baseline"), build_b = check_build(a.candidate, "candidate");
  const std::vector<ListedRun> runs_a = runs_of(build_a, a.spec), runs_b = runs_of(build_b, a.spec);
  if (const std::string diff = first_difference(runs_a, runs_b); !diff.empty())
    throw UserError("the two builds give " + a.spec + " different runs: " + diff +
                    ". Their runs cannot be paired (the change alters a run's identity: a model's options or defaults); "
                    "run each build on its own and compare what can be compared in the report");
  record_builds(dir, a.spec, build_a, build_b);
  const auto cells = cells_of(runs_a);
  fmt::print(stderr, "lrbench ab: {} cell(s), {} run(s) per build; baseline {}, candidate {}\n", cells.size(), runs_a.size(),
             build_a.version, build_b.version);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    // A B, then B A: a drift of the machine over the study (its clock, its temperature, other
    // load) falls on both builds alike.
    const std::pair<const Build*, fs::path> order[2] = {{&build_a, side_a}, {&build_b, side_b}};
    for (int k = 0; k < 2; ++k) {
      const auto& [build, folder] = order[i % 2 == 0 ? k : 1 - k];
      if (cell_done(folder, cells[i])) continue;
      if (stop_requested()) return kExitStopped;
      fmt::print(stderr, "lrbench ab: cell {}/{}: the {}\n", i + 1, cells.size(), build->role);
      const int code = run_cell(*build, a, folder, cells[i]);
      if (code == kExitStopped || stop_requested()) {
        fmt::print(stderr, "lrbench ab: stopped; run the same command again to resume\n");
        return kExitStopped;
      }
      if (code == kExitUsage)
        throw UserError(fmt::format("the {}'s run of cell {} refused it (its message above says why)", build->role, i + 1));
      if (code != kExitDone && code != kExitFailedRuns)
        throw EnvironmentError(fmt::format("the {}'s run of cell {} exited {}; its output above says why", build->role, i + 1, code));
    }
  }
  const Comparison c = compare_results(load_report_input({side_a}), load_report_input({side_b}), options);
  emit_report(comparison_report(c), out);
  return fails(a.fail_on, c) ? kExitRegressed : kExitDone;
}

void add_ab_command(CLI::App& app, CommandResult& result) {
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("ab", "run a sweep with two builds on this machine, interleaved cell by cell (A B, B A, ...) "
                                       "in one process layout, then compare them as `lrbench compare` does");
  cmd->add_option("spec", a->spec, "the sweep file (a fixed design)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--baseline", a->baseline, "the baseline build: its lrbench program, or its build folder")->required();
  cmd->add_option("--candidate", a->candidate, "the candidate build: its lrbench program, or its build folder")->required();
  cmd->add_option("--out", a->out, "folder for both sides' results (DIR/baseline, DIR/candidate) and the record of the builds")
      ->required();
  cmd->add_option("--ranks", a->ranks, "each build's `run --ranks` (N or auto); default: one process");
  cmd->add_option("--threads", a->threads, "each build's `run --threads`");
  cmd->add_option("--data-cache", a->data_cache, "each build's `run --data-cache`");
  cmd->add_option("--margin", a->margins, "as `lrbench compare --margin` (FIGURE=VALUE or FIGURE=P%)");
  cmd->add_option("--alpha", a->alpha, "as `lrbench compare --alpha`")->check(CLI::Range(1e-6, 0.5));
  add_fail_on_option(cmd, a->fail_on);
  add_output_args(cmd, a->output);
  cmd->callback([a, &result] { result.exit_code = ab(*a); });
}

LRB_REGISTER_COMMAND(add_ab_command);

}  // namespace
}  // namespace lrb
