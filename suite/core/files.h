#pragma once
// File-system steps of the publish protocol: write a temporary file, close, fsync, rename,
// fsync the folder. A crash at any point leaves either the old file or the new one.
#include <filesystem>
#include <string>
#include <string_view>

namespace lrb {

namespace fs = std::filesystem;

// fsync a file or a folder by path; throws UserError naming the path on failure.
void fsync_path(const fs::path& path);
// rename(tmp, final) then fsync the folder holding them.
void publish_file(const fs::path& tmp, const fs::path& final_path);
// Writes bytes to final_path through a temporary file in the same folder.
void write_file_atomic(const fs::path& final_path, std::string_view bytes);
// A temporary name next to final_path that no other process of any host uses:
// ".<name>.tmp.<host>.<pid>". Readers and the resume scan skip such names.
fs::path temp_path_for(const fs::path& final_path);
bool is_temp_name(const std::string& filename);
std::string read_file(const fs::path& path);
std::string host_name();

// A name a user gives (sweep name, report file stem) must stay one path component.
bool is_safe_name(std::string_view name);

// Holds an advisory lock on a file for the life of the object, so that two sweeps cannot
// write one results folder at the same time. Shared: the shards of one sweep (each also
// holding an exclusive lock of its own) may write the folder together, a whole sweep not.
class FolderLock {
 public:
  enum class Mode { Exclusive, Shared };
  explicit FolderLock(const fs::path& lock_file, Mode mode = Mode::Exclusive);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

// Holds an exclusive advisory lock (flock) on a file, waiting for it if another process
// holds it; released at destruction (or when the process dies, so a crashed holder never
// leaves it stuck). Where the file system refuses flock (some network file systems),
// locked() is false and `why_unlocked()` says why: callers whose writes are atomic anyway
// go on without it.
class FileLock {
 public:
  explicit FileLock(const fs::path& lock_file);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool locked() const { return locked_; }
  const std::string& why_unlocked() const { return why_; }

 private:
  int fd_ = -1;
  bool locked_ = false;
  std::string why_;
};

}  // namespace lrb
