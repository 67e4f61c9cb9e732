// libFuzzer target: run files whose digest was sealed again after the damage, as a faulty
// writer (not a faulty disk) would leave them. Here HDF5 parses the damaged bytes, and
// lrbench's checks behind the digest (the complete marker, Fletcher32 on every dataset,
// SHA-256 on every text, shapes and names) and HDF5's own metadata checksums must refuse
// them. This target found HDF5 1.10 crashing on a damaged group link heap; run files now
// keep their links where HDF5 checksums them (tests/fuzz/README.md).
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
