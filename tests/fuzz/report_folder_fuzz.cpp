// libFuzzer target: the report's reader of a results folder (suite/report/report_input.h)
// and the report built from it, with any bytes as the folder's sweep.json (the manifest:
// the sweep's run keys, its skipped combinations and its [[claim]]s). The folder's runs/
// holds the six runs of a tiny sweep with two claims
// (tests/fuzz/report_folder_runs/; its sweep.json is a seed). Whatever the manifest says, the
// answer is a report (in every registered format but html) or a UserError that names the file;
// any other exception, a crash or a hang is a bug. Seeds: tests/fuzz/corpus/report_folder/.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>

#include "suite/core/errors.h"
#include "suite/report/report_builder.h"
#include "suite/report/report_input.h"
#include "suite/report/sinks.h"
#include "suite/store/results_layout.h"
#include "suite/store/run_file.h"
#include "tests/fuzz/fuzz_file.h"

namespace fs = std::filesystem;

namespace {

// A results folder of this process: the seed run files under their run keys.
const fs::path& results_folder() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("lrb-fuzz-report-folder-" + std::to_string(::getpid()));
    const lrb::ResultsLayout layout(d);
    fs::create_directories(layout.runs());
    for (const auto& seed : fs::directory_iterator(LRB_FUZZ_REPORT_RUNS)) {
      const lrb::RunFileCheck check = lrb::read_run_file(seed.path());
      if (check.valid()) fs::copy_file(seed.path(), layout.run_file(check.record->key), fs::copy_options::overwrite_existing);
    }
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path& dir = results_folder();
  lrb::fuzz::write_bytes(lrb::ResultsLayout(dir).manifest(), std::string(reinterpret_cast<const char*>(data), size));
  try {
    const lrb::ReportInput input = lrb::load_report_input({dir});
    lrb::ReportOptions options;
    options.bootstrap.resamples = 200;  // the statistics are not under test; their inputs are
    const lrb::Report report = lrb::build_report(input, options);
    for (const auto& format : lrb::report_format_entries()) {
      // html runs gnuplot, a child process per report: too slow to fuzz, and it draws from
      // the report's data, which the json format writes whole.
      if (format.name == "html") continue;
      std::ostringstream out;
      format.make(false)->write(report, out);
    }
  } catch (const lrb::UserError&) {
  }
  return 0;
}
