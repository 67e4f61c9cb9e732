// libFuzzer target: the idx reader (workloads/loaders/idx.h: MNIST-style arrays, plain or
// gzip) on any bytes. The answer is an array or a UserError naming the file; never a crash,
// never an allocation the file's own size does not justify (a header may claim any dims).
// Seeds: tests/fuzz/corpus/idx/ (a real Fashion-MNIST label file cut short, and small
// arrays of every element type, plain and gzip).
#include <cstdint>
#include <string>

#include "suite/core/errors.h"
#include "tests/fuzz/fuzz_file.h"
#include "workloads/loaders/idx.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = lrb::fuzz::scratch_file("idx");
  lrb::fuzz::write_bytes(path, std::string(reinterpret_cast<const char*>(data), size));
  try {
    (void)lrb::read_idx_header(path);
  } catch (const lrb::UserError&) {
  }
  try {
    (void)lrb::read_idx(path);
  } catch (const lrb::UserError&) {
  }
  return 0;
}
