#include "tests/support/damage.h"

#include <gtest/gtest.h>

#include <fstream>

#include "suite/core/file_digest.h"
#include "suite/core/files.h"

namespace lrb::test {

void flip_byte(const std::filesystem::path& file, std::uint64_t offset, unsigned char mask) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  ASSERT_TRUE(f.get(c));
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(static_cast<unsigned char>(c) ^ mask));
  ASSERT_TRUE(f);
}

std::uint64_t chunk_offset(const std::filesystem::path& file, const std::string& dataset) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_GE(f, 0);
  const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  EXPECT_GE(d, 0);
  const hid_t s = H5Dget_space(d);
  hsize_t coords[1] = {0}, size = 0;
  unsigned mask = 0;
  haddr_t addr = HADDR_UNDEF;
  EXPECT_GE(H5Dget_chunk_info(d, s, 0, coords, &mask, &addr, &size), 0);
  EXPECT_GT(size, 4u);
  // Addresses are relative to the file's base: after the user block.
  const hid_t fcpl = H5Fget_create_plist(f);
  hsize_t user_block = 0;
  EXPECT_GE(H5Pget_userblock(fcpl, &user_block), 0);
  H5Pclose(fcpl);
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(f);
  return addr + user_block;
}

void reseal(const std::filesystem::path& file) {
  std::string bytes = read_file(file);
  ASSERT_GE(bytes.size(), kDigestBlockBytes);
  seal_digest(bytes);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

void edit_hdf5_root(const std::filesystem::path& file, const std::function<void(hid_t)>& edit) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  edit(f);
  ASSERT_GE(H5Fclose(f), 0);
}

}  // namespace lrb::test
