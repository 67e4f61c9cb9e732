#pragma once
// A whole-file digest for the files lrbench writes and reads back (run files, sweep.h5,
// data cache files, checkpoints). The first kDigestBlockBytes of such a file are a small
// text header, written when the file is published:
//
//   lrbench-digest 1\n
//   sha256 <64 hex digits>\n
//   bytes <n>\n
//   (NUL padding)
//
// holding the SHA-256 and the length of everything after the block. For HDF5 files the
// block is the file's user block, which HDF5 (and h5py, h5dump) skips. A reader verifies
// the digest before any library parses the file: HDF5 crashes, rather than fails, on some
// damaged metadata (a flipped byte in a group's link storage), and a checkpoint has no
// checksum of its own. A file without the header is suspect and is treated as damaged.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace lrb {

inline constexpr std::size_t kDigestBlockBytes = 512;

// Fills bytes[0, kDigestBlockBytes) with the header for bytes[kDigestBlockBytes, end). The
// caller reserved the block (an HDF5 user block, or zeros in front of another format).
void seal_digest(std::string& bytes);
void seal_digest(char* bytes, std::size_t size);  // the same, in place in a buffer
// The same for a file already written (sweep.h5, streamed to disk as it is built): reads
// its body in blocks, writes the header over its first block and fsyncs it. Memory stays at
// one block whatever the file's size. EnvironmentError naming the file and the system's
// reason (a full disk) when it cannot; never follows a symbolic link.
void seal_file_digest(const std::filesystem::path& path);

// Why a sealed file (or its bytes) cannot be trusted, or "" when the digest matches. Reads
// the file in blocks; never parses the body.
std::string digest_problem(const std::filesystem::path& path);
std::string sealed_bytes_problem(std::string_view bytes);
// Reads a sealed file whole into `bytes` and checks its digest: "" when intact, else why
// not (the reasons above). A reader then parses `bytes`, the very bytes checked: a file
// replaced between the check and the parse cannot slip through. Opens without following a
// FIFO's writer (O_NONBLOCK) and refuses anything but a regular file, and a file whose
// header claims more bytes than it has, before reading its body.
std::string read_sealed_file(const std::filesystem::path& path, std::string& bytes);

// The body of sealed bytes (everything after the header), for a verified file.
inline std::string_view digest_body(std::string_view bytes) { return bytes.substr(kDigestBlockBytes); }

}  // namespace lrb
