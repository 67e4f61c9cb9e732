// AttendInput*: the reader of `lrbench attend`'s input file on shapes a damaged or crafted
// file claims (tests/fuzz/attend_input_fuzz.cpp found it allocating whatever q claimed).
#include <gtest/gtest.h>

#include "suite/cli/attend_input.h"
#include "suite/core/errors.h"
#include "suite/hdf5/h5.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

// q of `dims` (float32, chunked, nothing written): HDF5 stores the claim and no data.
std::string file_with_q(const test::TempDir& t, const std::vector<hsize_t>& dims) {
  const std::string p = (t.path() / "qkv.h5").string();
  h5::File f = h5::create_file(p);
  const std::vector<hsize_t> chunk(dims.size(), 1);
  h5::Dataspace space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), p);
  h5::Plist dcpl(H5Pcreate(H5P_DATASET_CREATE), p);
  EXPECT_GE(H5Pset_chunk(dcpl.id(), static_cast<int>(chunk.size()), chunk.data()), 0);
  h5::Dataset q(H5Dcreate2(f.id(), "q", H5T_IEEE_F32LE, space.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT), p);
  EXPECT_TRUE(q);
  q.reset();
  f.close();
  return p;
}

TEST(AttendInput, AShapeBeyondMemoryIsRefusedBeforeAllocating) {
  h5::silence_error_printing();
  test::TempDir t;
  // The product overflows 64 bits, and one that does not but exceeds any memory.
  for (const std::vector<hsize_t>& dims : {std::vector<hsize_t>{2, hsize_t{1} << 60, 8, 4},
                                           std::vector<hsize_t>{1, 1024, hsize_t{1} << 30, 64}}) {
    const std::string p = file_with_q(t, dims);
    try {
      read_attend_input(p, {"mask", "global", "sizes"});
      ADD_FAILURE() << "no error";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("dataset 'q' has shape"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("more than this machine's memory"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace lrb
