#include "suite/core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "suite/core/errors.h"

namespace lrb {

MappedFile::MappedFile(const std::filesystem::path& path, std::uintmax_t max_bytes, const std::string& what) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw UserError("cannot open " + what + " " + path.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UserError(what + " " + path.string() + " is not a regular file (a folder, a device or a FIFO)");
  }
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw UserError(what + " " + path.string() + " has " + std::to_string(st.st_size) + " bytes; at most " +
                    std::to_string(max_bytes) + " are read");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);
    if (p == MAP_FAILED) throw EnvironmentError("cannot map " + what + " " + path.string() + ": " + std::strerror(err));
    data_ = p;
  } else {
    ::close(fd);
  }
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

}  // namespace lrb
