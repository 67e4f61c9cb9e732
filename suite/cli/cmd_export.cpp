// lrbench export DIR...: every run as tidy rows (one per run and figure) for pandas and R,
// as CSV or JSON Lines, to standard output or atomically to a file (suite/report/tidy_rows.h).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <system_error>

#include "suite/cli/command.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/files.h"
#include "suite/core/keep_until_exit.h"
#include "suite/report/tidy_rows.h"
#include "suite/store/output_paths.h"

namespace lrb {
namespace {

struct Args {
  std::vector<std::string> dirs;
  std::string format;  // "" = from -o's extension, else csv
  std::string output;
};

TidyFormat chosen_format(const Args& a, bool to_stdout) {
  std::optional<TidyFormat> format;
  if (!a.format.empty()) format = tidy_format_from_name(a.format);  // CLI11 checked the name
  if (!to_stdout) {
    // The file's name and its contents agree: rows never land as CSV in "x.jsonl".
    const std::optional<TidyFormat> named = tidy_format_for_file(a.output);
    const std::string ext = std::filesystem::path(a.output).extension().string();
    if (!named && !ext.empty() && !format)
      throw UserError("-o " + a.output + ": export writes .csv or .jsonl files; name the file by its format or give --format");
    if (named && format && *named != *format)
      throw UserError("-o " + a.output + " names a " + ext.substr(1) + " file, but --format is " + a.format +
                      ": give the file its format's extension, or leave out --format");
    if (!format) format = named;
  }
  return format.value_or(TidyFormat::Csv);
}

// Rows are written as they are made (a folder of 100,000 runs gives millions), through a
// temporary file published when complete: a full disk leaves the old file, never half a new one.
std::size_t export_to_file(const ReportInput& input, TidyFormat format, const std::filesystem::path& target) {
  const std::filesystem::path tmp = temp_path_for(target);
  std::size_t rows = 0;
  {
    ::close(create_temp_file(tmp));  // made new, never through a link placed at its name
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw EnvironmentError("cannot create " + tmp.string() + " for -o " + target.string());
    rows = write_tidy_rows(input, format, out);
    out.flush();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw EnvironmentError("writing " + target.string() + " failed (a full disk?); nothing was replaced");
    }
  }
  try {
    fsync_path(tmp);
    publish_file(tmp, target);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
  return rows;
}

void add_export_command(CLI::App& app, CommandResult& result) {
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("export", "every run of one or more results folders as tidy rows (one per run and figure: "
                                           "settings, value, unit, direction, status, provenance) for pandas");
  cmd->add_option("dirs", a->dirs, "results folders")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--format", a->format, "csv (the default) or jsonl; with -o, taken from the file's extension")
      ->check(CLI::IsMember({"csv", "jsonl"}));
  cmd->add_option("-o,--output", a->output, "write to this file (atomically) instead of standard output");
  cmd->callback([a, &result] {
    const bool to_stdout = a->output.empty() || a->output == "-";
    std::vector<std::filesystem::path> dirs(a->dirs.begin(), a->dirs.end());
    // Checked before anything is read: a device node, a FIFO, a link or a results folder's
    // own file at -o is never replaced.
    const std::filesystem::path target = to_stdout ? std::filesystem::path() : checked_output_file(a->output, "-o", dirs);
    const TidyFormat format = chosen_format(*a, to_stdout);
    // Freed by the exit, not one allocation at a time (keep_until_exit.h).
    const ReportInput& input = keep_until_exit(load_report_input(dirs));
    for (const auto& note : input.notes) std::cerr << "lrbench export: " << note << '\n';
    if (!input.bad.empty())
      std::cerr << "lrbench export: " << input.bad.size() << " unreadable file(s), exported as rows of status "
                << "\"unreadable\" with the reason\n";
    if (to_stdout) {
      write_tidy_rows(input, format, std::cout);
      std::cout.flush();
      if (!std::cout) throw EnvironmentError("writing the rows to standard output failed");
    } else {
      const std::size_t rows = export_to_file(input, format, target);
      std::cerr << "lrbench export: " << rows << " rows of " << input.runs.size() << " runs in " << a->output << '\n';
    }
    result.exit_code = kExitDone;
  });
}

LRB_REGISTER_COMMAND(add_export_command);

}  // namespace
}  // namespace lrb
