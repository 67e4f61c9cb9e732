#pragma once
// Thin RAII over the HDF5 C API. Every call that can fail is checked; a failure throws
// h5::Error, whose message names the operation, the file, the process ("host H rank R")
// and carries HDF5's own error stack as text. HDF5's automatic printing of that stack is
// turned off: failures become reasons in messages, not noise on stderr.
//
// Handles remember the file they belong to, so that a failure deep in a reader can still
// say which file it was. Not thread-safe beyond what the HDF5 library itself guarantees.
#include <hdf5.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lrb::h5 {

class Error : public std::runtime_error {
 public:
  Error(std::string operation, std::string file, std::string stack);
  const std::string& operation() const { return operation_; }
  const std::string& file() const { return file_; }
  const std::string& stack() const { return stack_; }  // HDF5's error stack, one line
  // A filter found stored data damaged (Fletcher32 mismatch).
  bool is_checksum_failure() const;

 private:
  std::string operation_, file_, stack_;
};

// Turns off HDF5's automatic printing of the error stack for the calling thread. Called by
// every entry point below that opens or creates a file; cheap.
void silence_error_printing();
// The current thread's HDF5 error stack, outermost call first, as one line
// ("H5Dread(): can't read data; H5Z_pipeline(): filter returned failure; ...").
std::string error_stack_text();

// Throws Error for `operation` on `file`, with the current error stack.
[[noreturn]] void fail(std::string_view operation, const std::string& file);
inline hid_t check_id(hid_t id, std::string_view operation, const std::string& file) {
  if (id < 0) fail(operation, file);
  return id;
}
inline void check(herr_t rc, std::string_view operation, const std::string& file) {
  if (rc < 0) fail(operation, file);
}
inline bool check_tri(htri_t rc, std::string_view operation, const std::string& file) {
  if (rc < 0) fail(operation, file);
  return rc > 0;
}

// An HDF5 identifier and the file it belongs to (for messages).
class Object {
 public:
  hid_t id() const { return id_; }
  const std::string& file() const { return file_; }
  explicit operator bool() const { return id_ >= 0; }

 protected:
  Object() = default;
  Object(hid_t id, std::string file) : id_(id), file_(std::move(file)) {}
  hid_t id_ = -1;
  std::string file_;
};

// Owns one identifier and closes it with the matching H5*close. The destructor ignores a
// failing close (it may run while unwinding); call close() where the close does work that
// must succeed (a file being written).
template <herr_t (*Close)(hid_t)>
class Handle : public Object {
 public:
  Handle() = default;
  Handle(hid_t id, std::string file) : Object(id, std::move(file)) {}
  Handle(Handle&& o) noexcept : Object(std::exchange(o.id_, -1), std::move(o.file_)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, -1);
      file_ = std::move(o.file_);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  void close() {
    if (id_ < 0) return;
    const hid_t id = std::exchange(id_, -1);
    check(Close(id), "close", file_);
  }
  void reset() {
    if (id_ >= 0) Close(std::exchange(id_, -1));
  }
};

using File = Handle<H5Fclose>;
using Group = Handle<H5Gclose>;
using Dataset = Handle<H5Dclose>;
using Dataspace = Handle<H5Sclose>;
using Datatype = Handle<H5Tclose>;
using Plist = Handle<H5Pclose>;
using Attribute = Handle<H5Aclose>;

// ---- files ---------------------------------------------------------------------------
// Files use the HDF5 1.10 format (every metadata block is checksummed; HDF5 >= 1.10 reads
// them), and no file locking: files are written once under a private temporary name, and
// flock() fails on some cluster file systems.
File create_file(const std::filesystem::path& path);  // truncates
File open_file(const std::filesystem::path& path, bool writable = false);
// Opens a file lrbench wrote and a reader is about to validate. Its whole-file digest
// (suite/core/file_digest.h) is checked first: HDF5 only ever sees intact bytes (it crashes,
// rather than fails, on some damaged metadata). Never throws for a bad file: on failure the
// result is empty and `reason` says why ("missing", "not a regular file", "cannot open:
// empty file", "truncated: ...", "checksum error: ...", "no whole-file digest ...",
// "cannot open: not an HDF5 file (...)").
File open_for_validation(const std::filesystem::path& path, std::string& reason);
// Opens, read-only and in memory, the bytes of a file read whole (a sealed file whose
// digest the caller checked: HDF5 finds its superblock after the digest block). HDF5 reads
// its own copy of `bytes`; `name` is for messages.
File open_image(std::string_view bytes, const std::string& name);

// A new file built in memory (HDF5's core driver, no backing store), with a user block of
// kDigestBlockBytes for the whole-file digest. HDF5 never writes to disk: the caller takes
// the bytes and writes them (publish_memory_file), so a full disk fails a plain write with
// a clear error instead of leaving HDF5 with a half-flushed file. A file too large for
// memory (sweep.h5) is streamed to disk instead: suite/hdf5/streamed_file.h.
class MemoryFile {
 public:
  explicit MemoryFile(const std::filesystem::path& name);  // the name is for messages
  ~MemoryFile();
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  const File& file() const { return file_; }
  // Closes the file; its bytes (the user block zero-filled, then HDF5's) stay in this
  // object's buffer (no copy), writable for the digest, until it is destroyed.
  std::pair<char*, std::size_t> close_in_place();
  struct Image;  // the buffer HDF5 hands over (public for its C callbacks)

 private:
  std::unique_ptr<Image> image_;
  File file_;
};
// Closes `file`, seals its digest and writes it atomically to final_path (temporary file,
// fsync, rename, fsync folder). EnvironmentError when the disk refuses the bytes.
void publish_memory_file(MemoryFile& file, const std::filesystem::path& final_path);

// ---- groups and links ----------------------------------------------------------------
// A group keeps its links in its checksummed object header (compact) up to 4096 of them.
// Dense: links in a fractal heap and B-tree from the first, for a group of many thousands
// (sweep.h5's /runs) in a file whose whole-file digest is checked before HDF5 reads it:
// inserting into a large compact group costs time linear in its links, and converting one
// of 4096 links to dense storage took minutes.
enum class LinkStorage { Compact, Dense };
Group create_group(const Object& loc, const std::string& name, LinkStorage storage = LinkStorage::Compact);
Group open_group(const Object& loc, const std::string& name);
bool link_exists(const Object& loc, const std::string& name);
// Names of the links in a group, in byte order.
std::vector<std::string> link_names(const Object& loc);
// The absolute path of an object ("/curves/train_loss"), for messages.
std::string object_path(const Object& obj);
// Copies an object (group or dataset, with its attributes and members) to dst/dst_name.
// Chunks are copied as stored, so their checksums travel with them.
void copy_object(const Object& src_loc, const std::string& src_name, const Object& dst_loc,
                 const std::string& dst_name);

// ---- attributes (small values only: attributes over ~64 KiB fail) ---------------------
bool attribute_exists(const Object& obj, const std::string& name);
void delete_attribute(const Object& obj, const std::string& name);
void write_int_attribute(const Object& obj, const std::string& name, long long value);
void write_string_attribute(const Object& obj, const std::string& name, const std::string& value);
// nullopt when there is no such attribute; throws Error when it cannot be read.
std::optional<long long> read_int_attribute(const Object& obj, const std::string& name);
std::optional<std::string> read_string_attribute(const Object& obj, const std::string& name);

// ---- datasets ------------------------------------------------------------------------
Dataset open_dataset(const Object& loc, const std::string& name);
// Text of any size as a shape-(1,) dataset of one fixed-length UTF-8 string, chunked with
// the Fletcher32 filter, so the text sits in a checksummed chunk. Not a variable-length
// string: those live in the global heap, which no checksum covers, and HDF5 1.10 crashes
// (not fails) reading a corrupted heap. The text must not contain NUL bytes.
Dataset write_string_dataset(const Object& loc, const std::string& name, const std::string& text);
// Reads a dataset of one fixed-length string, as written above.
std::string read_string_dataset(const Dataset& ds);
// A 1-D float64 dataset, chunked with the Fletcher32 filter. unlimited: maxdims
// H5S_UNLIMITED (empty series need it: a chunk cannot have zero size).
void write_f64_dataset(const Object& loc, const std::string& name, const std::vector<double>& values,
                       bool unlimited);
std::vector<double> read_f64_dataset(const Dataset& ds);
bool has_fletcher32(const Dataset& ds);
// True when the dataset holds floating-point numbers in one dimension.
bool is_float_1d(const Dataset& ds);

// ---- arrays of numbers ---------------------------------------------------------------
// An n-dimensional array stored as `file_type` (e.g. H5T_STD_I64LE) from `data` in
// `mem_type` (e.g. H5T_NATIVE_INT64), row-major. Chunked by leading-dimension rows (about
// 1 MiB a chunk) with the Fletcher32 filter, fill time never; maxdims unlimited, so that a
// dimension of size 0 still has a chunk of size >= 1.
void write_array_dataset(const Object& loc, const std::string& name, hid_t file_type, hid_t mem_type,
                         const std::vector<hsize_t>& dims, const void* data);
std::vector<hsize_t> dataset_dims(const Dataset& ds);
// The bytes an array of `dims` takes as elements of `element_bytes`, or nullopt when the
// product overflows or exceeds this machine's physical memory. A damaged or crafted file
// may claim any shape: a reader checks this before it allocates (tests/fuzz found readers
// that asked for exabytes).
std::optional<std::uint64_t> in_memory_bytes(const std::vector<hsize_t>& dims, std::size_t element_bytes);
// Why the whole dataset cannot be read into memory as elements of `element_bytes`, or ""
// when it can: its shape beyond memory (in_memory_bytes), or fewer bytes stored than its
// shape needs: all of them without a filter, or a 1/70,400 share with filters (deflate
// expands at most about 1,032 times, n-bit packing 64 times). So a damaged file of 2 KiB
// cannot make a reader allocate gigabytes. The text follows "dataset X ".
std::string readable_size_problem(const Dataset& ds, std::size_t element_bytes);
struct ElementType {
  H5T_class_t type_class = H5T_NO_CLASS;  // H5T_INTEGER, H5T_FLOAT, ...
  std::size_t size = 0;                   // bytes
  bool is_signed = false;                 // integers
};
ElementType dataset_element_type(const Dataset& ds);
// The whole dataset into `out` (prod(dims) elements of mem_type); HDF5 converts between
// numeric types. Throws Error (is_checksum_failure() for a damaged chunk).
void read_array_dataset(const Dataset& ds, hid_t mem_type, void* out);

// The HDF5 library loaded ("1.10.8"), for `lrbench doctor` and every run's provenance.
std::string library_version();

}  // namespace lrb::h5
