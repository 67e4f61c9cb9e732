#include "suite/core/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "suite/core/errors.h"

namespace lrb {

namespace {
std::string errno_text() { return std::strerror(errno); }
}  // namespace

void fsync_path(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw UserError("cannot open " + path.string() + " to sync it: " + errno_text());
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  if (rc != 0) {
    errno = saved;
    throw UserError("fsync of " + path.string() + " failed: " + errno_text());
  }
}

void publish_file(const fs::path& tmp, const fs::path& final_path) {
  fsync_path(tmp);
  if (::rename(tmp.c_str(), final_path.c_str()) != 0)
    throw UserError("cannot rename " + tmp.string() + " to " + final_path.string() + ": " + errno_text());
  fsync_path(final_path.parent_path().empty() ? fs::path(".") : final_path.parent_path());
}

void write_file_atomic(const fs::path& final_path, std::string_view bytes) {
  const fs::path tmp = temp_path_for(final_path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UserError("cannot write " + tmp.string() + ": " + errno_text());
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw UserError("writing " + tmp.string() + " failed: " + errno_text());
  }
  publish_file(tmp, final_path);
}

fs::path temp_path_for(const fs::path& final_path) {
  return final_path.parent_path() /
         ("." + final_path.filename().string() + ".tmp." + host_name() + "." + std::to_string(::getpid()));
}

bool is_temp_name(const std::string& filename) {
  return !filename.empty() && filename[0] == '.' && filename.find(".tmp.") != std::string::npos;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot read " + path.string() + ": " + errno_text());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

bool is_safe_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return name[0] != '.';
}

FolderLock::FolderLock(const fs::path& lock_file, Mode mode) {
  fd_ = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw UserError("cannot create the lock file " + lock_file.string() + ": " + errno_text());
  if (::flock(fd_, (mode == Mode::Shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw UserError("another lrbench process is writing " + lock_file.parent_path().string() +
                    " (it holds " + lock_file.filename().string() +
                    "); wait for it to finish or use another --out folder");
  }
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

FileLock::FileLock(const fs::path& lock_file) {
  fd_ = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    why_ = "cannot open " + lock_file.string() + ": " + errno_text();
    return;
  }
  int rc = 0;
  // A signal (the stop handler) interrupts the wait; the holder is still working: wait on.
  while ((rc = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
  }
  if (rc != 0) {
    why_ = "flock on " + lock_file.string() + " failed: " + errno_text();
    return;
  }
  locked_ = true;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the lock
}

}  // namespace lrb
