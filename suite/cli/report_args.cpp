#include "suite/cli/report_args.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "suite/core/errors.h"
#include "suite/core/files.h"
#include "suite/report/compare.h"
#include "suite/report/sinks.h"
#include "suite/store/output_paths.h"

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
  add_output_args(cmd, a);
}

void add_output_args(CLI::App* cmd, ReportArgs& a) {
  const std::vector<std::string> formats = report_formats();
  std::string listed;
  for (std::size_t i = 0; i < formats.size(); ++i)
    listed += (i == 0 ? "" : i + 1 == formats.size() ? " or " : ", ") + formats[i];
  cmd->add_option("--format", a.format, listed + " (default: from -o's extension, else term)")
      ->check(CLI::IsMember(formats));
  cmd->add_option("-o,--output", a.output, "write to this file (atomically; - for standard output) instead of standard "
                                           "output; only a regular file is replaced");
}

void add_fail_on_option(CLI::App* cmd, std::string& fail_on) {
  cmd->add_option("--fail-on", fail_on,
                  "exit 5 when: regressed, any figure or run regressed; moved, any figure not read off a clock (every "
                  "one but seconds, rates, utilisation) is not identical bit for bit, or a run's status changed (the CI's "
                  "results check); never (default)")
      ->check(CLI::IsMember({"regressed", "moved", "never"}));
}

bool fails(const std::string& fail_on, const Comparison& c) {
  if (fail_on == "regressed") return c.count(Change::Regressed) > 0;
  if (fail_on == "moved") return c.moved() > 0;
  return false;
}

ReportOutput report_output(const ReportArgs& a, const std::vector<std::filesystem::path>& inputs) {
  ReportOutput out;
  out.format = a.format;
  if (a.output.empty() || a.output == "-") {
    if (out.format.empty()) out.format = "term";
    return out;
  }
  // A device node, a FIFO, a link or a results folder's own file at -o is never replaced.
  out.file = checked_output_file(a.output, "-o", inputs);
  // The file's name and its contents agree: a report never lands as text in "x.pdf", nor
  // as JSON in "x.md". A name without an extension takes --format, else plain text.
  const std::string ext = std::filesystem::path(a.output).extension().string();
  const std::string named = report_format_for_file(a.output);
  if (!ext.empty() && named.empty() && out.format.empty())
    throw UserError("-o " + a.output + ": no report format is written to a '" + ext + "' file; name it by its format (" +
                    report_file_extensions() + ") or give --format");
  if (!named.empty() && !out.format.empty() && named != out.format)
    throw UserError("-o " + a.output + " names a " + named + " file, but --format is " + out.format +
                    ": give the file its format's extension, or leave out --format");
  if (out.format.empty()) out.format = named.empty() ? "term" : named;
  return out;
}

void emit_report(const Report& report, const ReportOutput& out) {
  if (out.file.empty()) {
    make_report_sink(out.format, out.format == "term" && ::isatty(1))->write(report, std::cout);
    std::cout.flush();
    if (!std::cout) throw EnvironmentError("writing the report to standard output failed");
    return;
  }
  std::ostringstream ss;
  make_report_sink(out.format)->write(report, ss);
  write_file_atomic(out.file, ss.str());
}

}  // namespace lrb
