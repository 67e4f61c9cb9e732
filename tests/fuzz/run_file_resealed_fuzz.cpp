// libFuzzer target: run files whose digest was sealed again after the damage, as a faulty
// writer (not a faulty disk) would leave them. Here HDF5 parses the damaged bytes, and
// lrbench's checks behind the digest (the complete marker, Fletcher32 on every dataset,
// SHA-256 on every text, shapes and names) must refuse them. HDF5 1.10 itself crashes on
// some crafted metadata (tests/fuzz/README.md keeps what was found): run this target
// with -fork and -ignore_crashes to count them; CI does not run it.
#include <cstdint>
#include <string>

#include "suite/core/file_digest.h"
#include "suite/store/run_file.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < lrb::kDigestBlockBytes) return 0;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  lrb::seal_digest(bytes);
  const auto& path = lrb::fuzz::scratch_file("run-file-resealed");
  lrb::fuzz::write_bytes(path, bytes);
  (void)lrb::read_run_file(path);
  return 0;
}
