#include "suite/core/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
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
  if (fd < 0) throw EnvironmentError("cannot open " + path.string() + " to sync it: " + errno_text());
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  if (rc != 0) {
    errno = saved;
    throw EnvironmentError("fsync of " + path.string() + " failed: " + errno_text());
  }
}

void publish_file(const fs::path& tmp, const fs::path& final_path) {
  struct ::stat st {};
  const bool replaces = ::lstat(final_path.c_str(), &st) == 0;
  if (replaces && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
    throw EnvironmentError("cannot publish " + final_path.string() +
                           ": something that is not a regular file (a folder, a device, a FIFO) is in its place");
  // The new file takes the old one's permissions: replacing must not widen who may read it
  // (set-id bits are not a file's to pass on).
  if (replaces && S_ISREG(st.st_mode) && ::chmod(tmp.c_str(), st.st_mode & 0777) != 0)
    throw EnvironmentError("cannot give " + tmp.string() + " the mode of " + final_path.string() + ": " + errno_text());
  fsync_path(tmp);
  if (::rename(tmp.c_str(), final_path.c_str()) != 0)
    throw EnvironmentError("cannot rename " + tmp.string() + " to " + final_path.string() + ": " + errno_text());
  fsync_path(final_path.parent_path().empty() ? fs::path(".") : final_path.parent_path());
}

int create_temp_file(const fs::path& tmp) {
  // A file of this process's name left by a dead process of the same pid goes; anything
  // placed there meanwhile makes O_EXCL fail rather than be written through.
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw EnvironmentError("cannot create " + tmp.string() + ": " + errno_text());
  return fd;
}

void write_file_atomic(const fs::path& final_path, std::string_view bytes) {
  const fs::path tmp = temp_path_for(final_path);
  const auto fail = [&](const std::string& what) {
    const std::string text = errno_text();
    std::error_code ec;
    fs::remove(tmp, ec);  // nothing half-written stays behind
    throw EnvironmentError(what + " " + tmp.string() + " failed: " + text);
  };
  const int fd = create_temp_file(tmp);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      const int saved = errno;
      ::close(fd);
      errno = saved;
      fail("writing");
    }
    done += static_cast<std::size_t>(n);
  }
  // Delayed allocation can report a full disk only here.
  if (::fsync(fd) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    fail("fsync of");
  }
  if (::close(fd) != 0) fail("closing");
  try {
    publish_file(tmp, final_path);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
}

void write_all_to_stdout(std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw EnvironmentError("writing to standard output failed: " + errno_text());
    done += static_cast<std::size_t>(n);
  }
}

void refuse_filesystem_root(const fs::path& dir, const std::string& option) {
  std::error_code ec;
  const fs::path where = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (!ec && where == where.root_path())
    throw UserError(option + " " + dir.string() + " is the filesystem root; give the results a folder of their own, e.g. results/NAME");
}

void refuse_unreplaceable_output(const fs::path& path, const std::string& option) {
  std::error_code ec;
  const auto link = fs::symlink_status(path, ec);
  if (fs::is_symlink(link)) {
    const fs::path target = fs::read_symlink(path, ec);
    throw UserError(option + " " + path.string() + " is a symbolic link (to " + (ec ? std::string("?") : target.string()) +
                    "); lrbench does not write through a link to a file elsewhere: give the file you mean to replace "
                    "by its own path, or another name");
  }
  if (fs::exists(link) && !fs::is_regular_file(link))
    throw UserError(option + " " + path.string() + " exists and is not a regular file (" +
                    (fs::is_directory(link) ? "a folder" : "a device, FIFO or socket") +
                    "); lrbench replaces only regular files: give a file name, or - for standard output");
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

std::string read_user_file(const fs::path& path, std::uintmax_t max_bytes, const std::string& what) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (!fs::exists(st)) throw UserError(what + " " + path.string() + " does not exist");
  if (!fs::is_regular_file(st))
    throw UserError(what + " " + path.string() + " is not a regular file (a folder, a device or a FIFO); give a file");
  const auto size = fs::file_size(path, ec);
  if (ec) throw UserError("cannot read " + what + " " + path.string() + ": " + ec.message());
  if (size > max_bytes)
    throw UserError(what + " " + path.string() + " has " + std::to_string(size) + " bytes; at most " +
                    std::to_string(max_bytes) + " are read (is it the right file?)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot read " + what + " " + path.string() + ": " + errno_text());
  std::string out(static_cast<std::size_t>(size), '\0');
  in.read(out.data(), static_cast<std::streamsize>(size));
  out.resize(static_cast<std::size_t>(in.gcount()));
  char extra = 0;
  if (in.get(extra))  // grew since the size was taken: refuse rather than read without bound
    throw UserError(what + " " + path.string() + " is changing while it is read; try again");
  return out;
}

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

std::string name_problem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxNameLength)
    return "is " + std::to_string(name.size()) + " characters long; at most " + std::to_string(kMaxNameLength) +
           " are allowed";
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) return "may use only letters, digits, '.', '_' and '-' (and not start with '.')";
  }
  if (name[0] == '.') return "may use only letters, digits, '.', '_' and '-' (and not start with '.')";
  return "";
}

bool is_safe_name(std::string_view name) { return name_problem(name).empty(); }

FolderLock::FolderLock(const fs::path& lock_file, Mode mode) {
  fd_ = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw EnvironmentError("cannot create the lock file " + lock_file.string() + ": " + errno_text());
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
