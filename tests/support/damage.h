#pragma once
// Damaging result files on purpose, the way crashes and bad disks do: tests of readers and
// of the resume scan.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include <hdf5.h>

namespace lrb::test {

// XORs the byte at `offset` with `mask`.
void flip_byte(const std::filesystem::path& file, std::uint64_t offset, unsigned char mask);
// The file offset of the first chunk of a chunked dataset ("/curves/train_loss"), user
// block included.
std::uint64_t chunk_offset(const std::filesystem::path& file, const std::string& dataset);
// Opens the file read-write and runs `edit` on it (e.g. to delete the complete marker).
void edit_hdf5_root(const std::filesystem::path& file, const std::function<void(hid_t)>& edit);
// Writes the whole-file digest of a file again, as if its writer had produced the damage:
// what the readers check behind the digest (markers, checksums, hashes) can then be tested.
void reseal(const std::filesystem::path& file);

}  // namespace lrb::test
