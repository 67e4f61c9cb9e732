#pragma once
// The idx format (MNIST, Fashion-MNIST): a big-endian magic 0x0000TTDD (T: element type,
// D: number of dimensions), D big-endian uint32 sizes, then the elements, big-endian.
// Files may be gzip-compressed (recognised by content, not by name).
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace lrb {

struct IdxHeader {
  std::uint8_t type = 0;            // 0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32, 0x0D f32, 0x0E f64
  std::vector<std::int64_t> dims;
};

// Reads only the header (cheap, for describing a task). UserError naming the file when it
// is missing, not idx, or has an unknown element type.
IdxHeader read_idx_header(const std::string& path);

// Reads the whole file without keeping it (decompressing a .gz as it goes) and checks what
// read_idx checks: the elements the header announces are all there, with no bytes after
// them; float elements are finite. UserError naming the file (and the first bad element's
// record) otherwise. Cached by path, size and modification time: describing a task on a
// large data set costs one pass per process, and no memory.
void verify_idx(const std::string& path);

// The whole array as a tensor of the matching dtype (u8, i8, i16, i32, f32, f64), in host
// byte order. UserError for a missing file, a bad header, a truncated file (fewer elements
// than the header promises) or trailing bytes.
at::Tensor read_idx(const std::string& path);

// read_idx through a process-wide bounded cache (suite/core/file_cache.h) keyed by path,
// size and modification time, so a sweep that runs many models on one data set reads it
// once. Treat the result as read-only.
at::Tensor read_idx_cached(const std::string& path);

// Writes a tensor (one of the dtypes above) as idx, gzip-compressed when `gzip`.
void write_idx(const std::string& path, const at::Tensor& t, bool gzip);

}  // namespace lrb
