#pragma once
// The options `lrbench report` and `lrbench leaderboard` share, and how both write a Report.
#include <filesystem>
#include <string>
#include <vector>

#include "suite/report/analysis.h"
#include "suite/report/table.h"

namespace CLI {
class App;
}

namespace lrb {

struct ReportArgs {
  std::string metric;
  std::string baseline;
  std::string correction = "holm";
  double alpha = 0.05;
  std::size_t resamples = stats::BootstrapSettings{}.resamples;
  std::uint64_t seed = stats::kDefaultBootstrapSeed;
  std::string format;  // "" = from -o's extension, else term
  std::string output;
  bool breakdown = false;  // report --breakdown
  std::string cost;        // report --cost: the fronts' cost axis ("" = each task's default)
  std::string by = "metric";       // leaderboard --by: metric or cost-to-target
  std::string target_cost = "flops";  // leaderboard --cost: flops, seconds or steps

  ReportOptions options() const;
};

void add_report_args(CLI::App* cmd, ReportArgs& args, bool with_baseline);
// `compare` and `ab`: --fail-on regressed|moved|never, and whether a comparison fails by it
// (exit 5: suite/core/exit_codes.h).
void add_fail_on_option(CLI::App* cmd, std::string& fail_on);
struct Comparison;
bool fails(const std::string& fail_on, const Comparison& c);
// --format and -o only (add_report_args adds them too), for commands with tables of their own.
void add_output_args(CLI::App* cmd, ReportArgs& args);

// Where a report goes and in which format, checked before any result is read: -o's name
// against --format, and the file itself (suite/store/output_paths.h: never a results
// folder's own file, never through a link). `inputs`: the results folders the command reads.
struct ReportOutput {
  std::string format;
  std::filesystem::path file;  // empty: standard output
};
ReportOutput report_output(const ReportArgs& args, const std::vector<std::filesystem::path>& inputs);
// Writes to standard output (colour on a terminal) or atomically to out.file.
void emit_report(const Report& report, const ReportOutput& out);

}  // namespace lrb
