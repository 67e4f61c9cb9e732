// libFuzzer target: the reader of a user's labelled HDF5 data file (task hdf5-file,
// workloads/loaders/hdf5_data.h) on any bytes. A user's file carries no lrbench digest, so
// HDF5 itself parses whatever arrives: a crash inside libhdf5 1.10 on crafted metadata is
// recorded in tests/fuzz/README.md (its inputs in known_hdf5_defects/, not replayed by CI);
// a crash or a wrong answer in lrbench's checks behind it is a bug.
// Seeds: tests/fuzz/corpus/hdf5_data/ (small valid files of every layout the reader takes,
// written with h5py, and a few it must refuse).
#include <cstdint>
#include <string>

#include "suite/core/errors.h"
#include "tests/fuzz/fuzz_file.h"
#include "workloads/loaders/hdf5_data.h"

// A crafted file makes libhdf5 ask malloc for exabytes; without a sanitizer malloc then
// returns NULL and HDF5 fails cleanly (a UserError here). Let ASan's allocator do the same
// instead of reporting it: lrbench's own allocations are checked before they are made.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = lrb::fuzz::scratch_file("hdf5-data");
  lrb::fuzz::write_bytes(path, std::string(reinterpret_cast<const char*>(data), size));
  try {
    (void)lrb::read_hdf5_data(path);
  } catch (const lrb::UserError&) {
  }
  return 0;
}
