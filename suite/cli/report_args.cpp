#include "suite/cli/report_args.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>
#include <sstream>

#include "suite/core/errors.h"
#include "suite/core/files.h"
#include "suite/report/sinks.h"

namespace lrb {

ReportOptions ReportArgs::options() const {
  ReportOptions o;
  o.metric = metric;
  o.baseline = baseline;
  o.correction = correction == "bh" ? stats::Correction::kBenjaminiHochberg : stats::Correction::kHolm;
  o.alpha = alpha;
  o.bootstrap.resamples = resamples;
  o.bootstrap.seed = seed;
  o.breakdown = breakdown;
  o.cost = cost;
  o.rank_by = by == "cost-to-target" ? by : "";
  o.target_cost = target_cost;
  return o;
}

void add_report_args(CLI::App* cmd, ReportArgs& a, bool with_baseline) {
  cmd->add_option("--metric", a.metric, "metric to compare: a task metric (accuracy, macro_f1) or a stored one "
                                        "(eval_loss, peak_bytes); default: each task's primary metric");
  if (with_baseline)
    cmd->add_option("--baseline", a.baseline, "compare every model with this one (a model name, or a model with options "
                                              "as the tables name it: 'transformer attention=softmax'); default: all pairs");
  cmd->add_option("--correction", a.correction, "adjusted p-values the tables show and mark by: holm (family-wise) or bh "
                                                "(Benjamini-Hochberg, false discovery rate); JSON and CSV carry both")
      ->check(CLI::IsMember({"holm", "bh"}));
  cmd->add_option("--alpha", a.alpha, "significance level for marks and tie groups (default 0.05)")->check(CLI::Range(1e-6, 0.5));
  cmd->add_option("--resamples", a.resamples, "bootstrap resamples (default 10000)")->check(CLI::Range(100, 10000000));
  cmd->add_option("--bootstrap-seed", a.seed, "seed of the bootstrap resampling (recorded in every report)");
  const std::vector<std::string> formats = report_formats();
  std::string listed;
  for (std::size_t i = 0; i < formats.size(); ++i)
    listed += (i == 0 ? "" : i + 1 == formats.size() ? " or " : ", ") + formats[i];
  cmd->add_option("--format", a.format, listed + " (default: from -o's extension, else term)")
      ->check(CLI::IsMember(formats));
  cmd->add_option("-o,--output", a.output, "write to this file (atomically; - for standard output) instead of standard "
                                           "output; only a regular file is replaced");
}

void emit_report(const Report& report, const ReportArgs& a) {
  std::string format = a.format;
  const bool to_stdout = a.output.empty() || a.output == "-";
  // Checked before anything is written: a device node or FIFO at -o is never replaced.
  const std::filesystem::path target = to_stdout ? std::filesystem::path() : output_file_target(a.output, "-o");
  if (!to_stdout) {
    // The file's name and its contents agree: a report never lands as text in "x.pdf", nor
    // as JSON in "x.md". A name without an extension takes --format, else plain text.
    const std::string ext = std::filesystem::path(a.output).extension().string();
    const std::string named = report_format_for_file(a.output);
    if (!ext.empty() && named.empty() && format.empty())
      throw UserError("-o " + a.output + ": no report format is written to a '" + ext + "' file; name it by its format (" +
                      report_file_extensions() + ") or give --format");
    if (!named.empty() && !format.empty() && named != format)
      throw UserError("-o " + a.output + " names a " + named + " file, but --format is " + format +
                      ": give the file its format's extension, or leave out --format");
    if (format.empty()) format = named;
  }
  if (format.empty()) format = "term";
  if (to_stdout) {
    make_report_sink(format, format == "term" && ::isatty(1))->write(report, std::cout);
    std::cout.flush();
    if (!std::cout) throw EnvironmentError("writing the report to standard output failed");
    return;
  }
  std::ostringstream ss;
  make_report_sink(format)->write(report, ss);
  write_file_atomic(target, ss.str());
}

}  // namespace lrb
