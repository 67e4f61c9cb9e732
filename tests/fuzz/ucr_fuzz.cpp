// libFuzzer target: the UCR/UEA time-series readers (workloads/loaders/ucr.h) on any text.
// The first byte chooses the format (even: sktime .ts, odd: UCR 2018 .tsv); the rest is
// the file. The answer is a series set or a UserError naming the file and line.
// Seeds: tests/fuzz/corpus/ucr/ (small .ts and .tsv files in the archives' formats, the
// first byte set accordingly); dictionary ucr.dict (the .ts header keywords).
#include <cstdint>
#include <string>

#include "suite/core/errors.h"
#include "tests/fuzz/fuzz_file.h"
#include "workloads/loaders/ucr.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool ts = data[0] % 2 == 0;
  static const std::string ts_path = lrb::fuzz::scratch_file("ucr").string() + ".ts";
  static const std::string tsv_path = lrb::fuzz::scratch_file("ucr").string() + ".tsv";
  const std::string& path = ts ? ts_path : tsv_path;
  lrb::fuzz::write_bytes(path, std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  try {
    const lrb::SeriesSet s = lrb::read_series_file(path);
    const auto classes = s.class_names.empty() ? lrb::sorted_classes(s.labels) : s.class_names;
    (void)lrb::label_ids(s, classes);
  } catch (const lrb::UserError&) {
  }
  return 0;
}
