// libFuzzer target: the input reader of `lrbench attend` (suite/cli/attend_input.h) on any
// bytes, for a kernel that reads every optional input (mask, global, sizes). As with any
// user's HDF5 file, libhdf5 parses the bytes itself (see hdf5_data_fuzz.cpp); lrbench's
// checks of kinds and shapes behind it must answer tensors or a UserError.
// Seeds: tests/fuzz/corpus/attend_input/ (q, k, v with and without mask, global and sizes,
// written with h5py, and shapes the reader must refuse).
#include <cstdint>
#include <string>

#include "suite/cli/attend_input.h"
#include "suite/core/errors.h"
#include "tests/fuzz/fuzz_file.h"

// A crafted file makes libhdf5 ask malloc for exabytes; without a sanitizer malloc then
// returns NULL and HDF5 fails cleanly (a UserError here). Let ASan's allocator do the same
// instead of reporting it: lrbench's own allocations are checked before they are made.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = lrb::fuzz::scratch_file("attend-input");
  lrb::fuzz::write_bytes(path, std::string(reinterpret_cast<const char*>(data), size));
  try {
    (void)lrb::read_attend_input(path.string(), {"mask", "global", "sizes"});
  } catch (const lrb::UserError&) {
  }
  return 0;
}
