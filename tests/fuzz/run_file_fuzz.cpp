// libFuzzer target: the validating reader of run files (suite/store/run_file.h) on any
// bytes. Whatever happened to a published file — a flipped bit, a cut, a zeroed page, noise
// — the whole-file digest must refuse it before HDF5 parses anything: never a crash, never
// a file taken as valid that is not byte for byte what lrbench wrote.
// Seeds: tests/fuzz/corpus/run_file/ (real run files of the tiny sweep).
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_file.h"
#include "suite/store/run_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = lrb::fuzz::scratch_file("run-file");
  lrb::fuzz::write_bytes(path, std::string(reinterpret_cast<const char*>(data), size));
  (void)lrb::read_run_file(path);
  return 0;
}
