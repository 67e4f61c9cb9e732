#pragma once
// File-system steps of the publish protocol: write a temporary file, close, fsync, rename,
// fsync the folder. A crash at any point leaves either the old file or the new one.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace lrb {

namespace fs = std::filesystem;

// fsync a file or a folder by path; throws EnvironmentError naming the path on failure.
void fsync_path(const fs::path& path);
// rename(tmp, final) then fsync the folder holding them. Refuses (EnvironmentError) to
// replace anything at final_path but a regular file or a symbolic link: a rename would
// otherwise replace a device node, a FIFO or an empty folder with the new file. A regular
// file replaced keeps its mode (a private 0600 file stays private); a link is replaced
// itself, never written through.
void publish_file(const fs::path& tmp, const fs::path& final_path);
// Creates `tmp` for writing, new (O_EXCL: never through a symbolic link or into a file
// someone placed at the name); a stale file of that name is removed first. Returns the
// descriptor; EnvironmentError naming the path when it cannot.
int create_temp_file(const fs::path& tmp);
// Writes bytes to final_path through a temporary file in the same folder. A failed write (a
// full disk: ENOSPC, EFBIG) throws EnvironmentError and leaves no temporary file behind.
void write_file_atomic(const fs::path& final_path, std::string_view bytes);
// Checks the file an output option names before anything is written: nothing there, or a
// regular file. UserError (naming `option`) for a symbolic link (lrbench never writes
// through one to a file elsewhere: the user gives the target itself), a device node, a
// FIFO, a socket or a folder. Results folders are refused one layer up
// (suite/store/output_paths.h).
void refuse_unreplaceable_output(const fs::path& path, const std::string& option);
// UserError (naming `option`) when a results folder would be the filesystem root: its
// runs/, slurm/ and lock files would land in /.
void refuse_filesystem_root(const fs::path& dir, const std::string& option);
// Writes all bytes to standard output (an output option given as "-"); EnvironmentError
// when the write fails (a closed pipe, a full disk behind a redirection).
void write_all_to_stdout(std::string_view bytes);
// A temporary name next to final_path that no other process of any host uses:
// ".<name>.tmp.<host>.<pid>". Readers and the resume scan skip such names.
fs::path temp_path_for(const fs::path& final_path);
bool is_temp_name(const std::string& filename);
std::string read_file(const fs::path& path);
// A text the user gives (a sweep file, a manifest): only a regular file of at most
// max_bytes is read (not /dev/zero, a FIFO, a folder); UserError naming `what` otherwise.
std::string read_user_file(const fs::path& path, std::uintmax_t max_bytes, const std::string& what);
std::string host_name();

// A name a user gives (sweep name, report file stem) must stay one path component.
inline constexpr std::size_t kMaxNameLength = 128;
bool is_safe_name(std::string_view name);
// Why a name is not safe ("is empty", "is 129 characters long; at most 128", "may use only
// letters, ..."), or "" when it is.
std::string name_problem(std::string_view name);

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
