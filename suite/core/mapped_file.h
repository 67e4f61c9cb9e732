#pragma once
// A regular file mapped read-only: a large file lrbench reads whole and only once (the
// results index) is used where it lies, without a copy. lrbench replaces such files by
// rename, never in place, so a mapping keeps the bytes it was opened with; readers verify a
// digest of what they map. (A file truncated in place by another program while mapped would
// end the reader with SIGBUS.)
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

namespace lrb {

class MappedFile {
 public:
  // UserError naming `what` for a file that is not there, not a regular file (a FIFO, a
  // device, a folder) or larger than max_bytes; EnvironmentError when it cannot be mapped.
  MappedFile(const std::filesystem::path& path, std::uintmax_t max_bytes, const std::string& what);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;

  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace lrb
