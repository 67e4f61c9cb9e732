#include "suite/hdf5/h5.h"
#include "suite/hdf5/streamed_file.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "suite/core/errors.h"
#include "suite/core/file_digest.h"
#include "suite/core/files.h"
#include "suite/core/process_info.h"

namespace lrb::h5 {

namespace {

// Series longer than this are split into chunks of this many values (64 KiB): large
// enough to keep the chunk index tiny, small enough that reading one value is cheap.
constexpr hsize_t kMaxChunk = 8192;

// "/group/name" for messages; "" names loc itself and "@attr" an attribute of it.
std::string join_name(const Object& loc, const std::string& name) {
  if (!name.empty() && name[0] == '/') return name;
  std::string base = object_path(loc);
  if (name.empty() || name[0] == '@') return base + name;
  if (base.empty() || base == "/") return "/" + name;
  return base + "/" + name;
}

// Fails with the stack captured before anything else calls HDF5 (each API call clears it).
[[noreturn]] void fail_at(const Object& loc, std::string_view operation, const std::string& name) {
  std::string stack = error_stack_text();
  std::string what = std::string(operation) + " " + join_name(loc, name);
  throw Error(std::move(what), loc.file(), std::move(stack));
}

hid_t id_at(hid_t id, const Object& loc, std::string_view operation, const std::string& name) {
  if (id < 0) fail_at(loc, operation, name);
  return id;
}

void ok_at(herr_t rc, const Object& loc, std::string_view operation, const std::string& name) {
  if (rc < 0) fail_at(loc, operation, name);
}

herr_t collect_error(unsigned /*n*/, const H5E_error2_t* err, void* data) {
  auto& out = *static_cast<std::string*>(data);
  if (!out.empty()) out += "; ";
  out += err->func_name ? err->func_name : "?";
  out += "(): ";
  out += err->desc ? err->desc : "";
  return 0;
}

herr_t collect_link(hid_t /*group*/, const char* name, const H5L_info_t* /*info*/, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

Plist make_plist(hid_t cls, const std::string& file) {
  return Plist(check_id(H5Pcreate(cls), "H5Pcreate", file), file);
}

// A group's links stay in its object header, which HDF5 checksums, up to kCompactLinks of
// them; beyond that HDF5 moves them to "dense" storage, whose fractal heap of names has no
// checksum and on which HDF5 1.10 crashes (rather than fails) when a byte is wrong
// (tests/fuzz/README.md). Run files stay far below; sweep.h5's /runs grows past it.
constexpr unsigned kCompactLinks = 4096;
void keep_links_compact(const Plist& gcpl, const std::string& file) {
  check(H5Pset_link_phase_change(gcpl.id(), kCompactLinks, kCompactLinks - 1), "H5Pset_link_phase_change", file);
}

Plist file_access(const std::string& file, bool for_create) {
  Plist fapl = make_plist(H5P_FILE_ACCESS, file);
  check(H5Pset_libver_bounds(fapl.id(), H5F_LIBVER_V110, H5F_LIBVER_V110), "H5Pset_libver_bounds", file);
  check(H5Pset_file_locking(fapl.id(), false, true), "H5Pset_file_locking", file);
  // A handle still open at H5Fclose is a bug in the writer: fail instead of silently
  // leaving the file open (and unflushed) until the process ends.
  if (for_create) check(H5Pset_fclose_degree(fapl.id(), H5F_CLOSE_SEMI), "H5Pset_fclose_degree", file);
  return fapl;
}

Datatype utf8_string_type(const std::string& file, size_t size) {
  Datatype t(check_id(H5Tcopy(H5T_C_S1), "H5Tcopy", file), file);
  check(H5Tset_size(t.id(), size), "H5Tset_size", file);
  check(H5Tset_cset(t.id(), H5T_CSET_UTF8), "H5Tset_cset", file);
  check(H5Tset_strpad(t.id(), H5T_STR_NULLPAD), "H5Tset_strpad", file);
  return t;
}

Dataspace scalar_space(const std::string& file) {
  return Dataspace(check_id(H5Screate(H5S_SCALAR), "H5Screate", file), file);
}

H5T_class_t type_class(hid_t type, const std::string& file) {
  const H5T_class_t c = H5Tget_class(type);
  if (c == H5T_NO_CLASS) fail("H5Tget_class", file);
  return c;
}

hssize_t point_count(hid_t space, const std::string& file) {
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  if (n < 0) fail("H5Sget_simple_extent_npoints", file);
  return n;
}

// Reads one fixed-length string (the only kind this store writes: variable-length strings
// live in the unchecksummed global heap, and HDF5 1.10 crashes reading a corrupted one).
template <class ReadFn>
std::string read_string_value(hid_t file_type, const std::string& file, ReadFn read) {
  if (type_class(file_type, file) != H5T_STRING) throw Error("read (not a string)", file, "");
  if (check_tri(H5Tis_variable_str(file_type), "H5Tis_variable_str", file))
    throw Error("read (a variable-length string; this store reads fixed-length strings only)", file, "");
  const size_t size = H5Tget_size(file_type);
  if (size == 0) fail("H5Tget_size", file);
  Datatype mem(check_id(H5Tcopy(file_type), "H5Tcopy", file), file);
  std::string buf(size, '\0');
  read(mem.id(), buf.data());
  buf.resize(std::min(buf.find('\0'), buf.size()));
  return buf;
}

}  // namespace

Error::Error(std::string operation, std::string file, std::string stack)
    : std::runtime_error("HDF5 " + operation + " failed for " + file + " on " + process_label() +
                         (stack.empty() ? std::string() : ": " + stack)),
      operation_(std::move(operation)),
      file_(std::move(file)),
      stack_(std::move(stack)) {}

namespace {
// How each HDF5 release words a failed Fletcher32 check on its error stack: 1.10 names the
// filter ("Fletcher32 checksum error"); 1.14 says only that the pipeline's filter failed
// ("filter returned failure during read"). The store's datasets carry no filter but
// Fletcher32, so either means a checksum did not match.
bool stack_says_checksum_failed(const std::string& stack) {
  return stack.find("Fletcher32") != std::string::npos || stack.find("checksum") != std::string::npos ||
         stack.find("filter returned failure during read") != std::string::npos;
}
}  // namespace

bool Error::is_checksum_failure() const { return stack_says_checksum_failed(stack_); }

void silence_error_printing() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

std::string error_stack_text() {
  std::string out;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &out);
  return out;
}

void fail(std::string_view operation, const std::string& file) {
  throw Error(std::string(operation), file, error_stack_text());
}

// ---- files ---------------------------------------------------------------------------

File create_file(const std::filesystem::path& path) {
  silence_error_printing();
  const std::string file = path.string();
  Plist fapl = file_access(file, true);
  return File(check_id(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id()), "H5Fcreate", file), file);
}

File open_file(const std::filesystem::path& path, bool writable) {
  silence_error_printing();
  const std::string file = path.string();
  Plist fapl = file_access(file, false);
  return File(check_id(H5Fopen(file.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl.id()), "H5Fopen", file),
              file);
}

File open_for_validation(const std::filesystem::path& path, std::string& reason) {
  silence_error_printing();
  reason = digest_problem(path);
  if (!reason.empty()) return {};
  try {
    return open_file(path);
  } catch (const Error& e) {
    reason = "cannot open: not an HDF5 file (" + e.stack() + ")";
    return {};
  }
}

File open_image(std::string_view bytes, const std::string& name) {
  silence_error_printing();
  Plist fapl = file_access(name, false);
  check(H5Pset_fapl_core(fapl.id(), 1 << 16, false), "H5Pset_fapl_core", name);
  check(H5Pset_file_image(fapl.id(), const_cast<char*>(bytes.data()), bytes.size()), "H5Pset_file_image", name);
  // A name no other open file has: HDF5 shares an open file of the same name.
  static std::atomic<unsigned long long> images{0};
  const std::string memory_name = name + " (image " + std::to_string(++images) + ")";
  return File(check_id(H5Fopen(memory_name.c_str(), H5F_ACC_RDONLY, fapl.id()), "H5Fopen (image)", name), name);
}

// The core driver's buffer, taken over when the file closes (file image callbacks): it
// holds the whole file from address 0, user block included.
struct MemoryFile::Image {
  char* buffer = nullptr;
  std::size_t size = 0;  // bytes of the file's buffer, as last allocated
  ~Image() { std::free(buffer); }
};

namespace {

bool is_file_buffer(H5FD_file_image_op_t op) {
  return op == H5FD_FILE_IMAGE_OP_FILE_OPEN || op == H5FD_FILE_IMAGE_OP_FILE_RESIZE;
}
void* image_malloc(size_t size, H5FD_file_image_op_t op, void* udata) {
  if (is_file_buffer(op)) static_cast<MemoryFile::Image*>(udata)->size = size;
  return std::malloc(size);
}
void* image_memcpy(void* dest, const void* src, size_t size, H5FD_file_image_op_t, void*) {
  return std::memcpy(dest, src, size);
}
void* image_realloc(void* ptr, size_t size, H5FD_file_image_op_t op, void* udata) {
  if (is_file_buffer(op)) static_cast<MemoryFile::Image*>(udata)->size = size;
  return std::realloc(ptr, size);
}
herr_t image_free(void* ptr, H5FD_file_image_op_t op, void* udata) {
  auto* image = static_cast<MemoryFile::Image*>(udata);
  if (op == H5FD_FILE_IMAGE_OP_FILE_CLOSE) {
    // The last file closed is the one built (HDF5 may open and close a tentative one
    // first): keep its buffer.
    std::free(image->buffer);
    image->buffer = static_cast<char*>(ptr);
    return 0;
  }
  std::free(ptr);
  return 0;
}
void* image_udata_copy(void* udata) { return udata; }
herr_t image_udata_free(void*) { return 0; }

// Superblock versions 2 and 3 (the 1.10 format): signature (8), version, sizes of offsets
// and lengths, flags (4), base address (8), extension address (8), end-of-file address (8).
constexpr std::size_t kSuperblockEofOffset = 28;

}  // namespace

MemoryFile::MemoryFile(const std::filesystem::path& name) : image_(std::make_unique<Image>()) {
  silence_error_printing();
  const std::string file = name.string();
  // A name no file on disk has: HDF5 first tries to open an existing file of the name
  // given (to share it), and the core driver would read that file into memory.
  const std::string memory_name = file + " (in memory)";
  Plist fapl = file_access(file, true);
  // 1 MiB steps: few reallocations for large files, little waste for small ones (the
  // bytes written are the file's own length, not the buffer's).
  check(H5Pset_fapl_core(fapl.id(), 1 << 20, false), "H5Pset_fapl_core", file);
  H5FD_file_image_callbacks_t callbacks = {image_malloc,     image_memcpy,     image_realloc, image_free,
                                           image_udata_copy, image_udata_free, image_.get()};
  check(H5Pset_file_image_callbacks(fapl.id(), &callbacks), "H5Pset_file_image_callbacks", file);
  Plist fcpl = make_plist(H5P_FILE_CREATE, file);
  check(H5Pset_userblock(fcpl.id(), kDigestBlockBytes), "H5Pset_userblock", file);
  keep_links_compact(fcpl, file);  // the root group's
  file_ = File(check_id(H5Fcreate(memory_name.c_str(), H5F_ACC_TRUNC, fcpl.id(), fapl.id()), "H5Fcreate (in memory)", file),
               file);
}

MemoryFile::~MemoryFile() = default;

std::pair<char*, std::size_t> MemoryFile::close_in_place() {
  LRB_CHECK(file_, "a memory file is closed once");
  file_.close();
  LRB_CHECK(image_->buffer != nullptr, "HDF5 handed over the image of a closed memory file");
  const char* super = image_->buffer + kDigestBlockBytes;
  LRB_CHECK(std::memcmp(super, "\211HDF\r\n\032\n", 8) == 0 && (super[8] == 2 || super[8] == 3),
            "a memory file starts with a version 2 or 3 superblock after its user block");
  std::uint64_t eof = 0;
  for (int i = 7; i >= 0; --i) eof = (eof << 8) | static_cast<unsigned char>(super[kSuperblockEofOffset + i]);
  // The stored end of file counts the user block: it is the file's length.
  LRB_CHECK(eof > kDigestBlockBytes && eof <= image_->size, "a memory file's end of file lies within its buffer");
  return {image_->buffer, static_cast<std::size_t>(eof)};
}

void publish_memory_file(MemoryFile& file, const std::filesystem::path& final_path) {
  const auto [data, size] = file.close_in_place();
  seal_digest(data, size);
  write_file_atomic(final_path, std::string_view(data, size));
}

// HDF5 closes every file still open when the process exits (H5_term_library, registered
// with atexit at its first call). A file whose close failed on a full disk stays half torn
// down inside the library, and that last close then crashes the process after it has said
// why it failed. lrbench closes each file it writes itself and never relies on the exit's:
// told before HDF5's first call (a static initialiser: HDF5 starts lazily), it registers none.
[[maybe_unused]] const herr_t kNoCloseAtExit = H5dont_atexit();

// ---- streamed files (suite/hdf5/streamed_file.h) ------------------------------------

StreamedFile::StreamedFile(const std::filesystem::path& final_path)
    : final_path_(final_path), temp_path_(temp_path_for(final_path)) {
  silence_error_printing();
  const std::string file = final_path.string();
  // A file of this process's temporary name left by a dead process of the same pid goes;
  // H5F_ACC_EXCL has HDF5 create it with O_EXCL, so anything placed there meanwhile (a
  // symbolic link) makes the create fail rather than be written through.
  ::unlink(temp_path_.c_str());
  Plist fapl = file_access(file, true);
  Plist fcpl = make_plist(H5P_FILE_CREATE, file);
  check(H5Pset_userblock(fcpl.id(), kDigestBlockBytes), "H5Pset_userblock", file);
  keep_links_compact(fcpl, file);  // the root group's
  file_ = File(check_id(H5Fcreate(temp_path_.c_str(), H5F_ACC_EXCL, fcpl.id(), fapl.id()), "H5Fcreate", file), file);
}

StreamedFile::~StreamedFile() {
  if (published_) return;
  file_.reset();
  ::unlink(temp_path_.c_str());  // nothing half-written stays behind
}

void StreamedFile::publish() {
  LRB_CHECK(file_ && !published_, "a streamed file is published once");
  file_.close();  // HDF5 flushes its metadata here: a full disk fails here at the latest
  seal_file_digest(temp_path_);
  publish_file(temp_path_, final_path_);
  published_ = true;
}

// ---- groups and links ----------------------------------------------------------------

Group create_group(const Object& loc, const std::string& name, LinkStorage storage) {
  Plist gcpl = make_plist(H5P_GROUP_CREATE, loc.file());
  if (storage == LinkStorage::Compact)
    keep_links_compact(gcpl, loc.file());
  else
    check(H5Pset_link_phase_change(gcpl.id(), 0, 0), "H5Pset_link_phase_change", loc.file());
  return Group(id_at(H5Gcreate2(loc.id(), name.c_str(), H5P_DEFAULT, gcpl.id(), H5P_DEFAULT), loc, "H5Gcreate", name),
               loc.file());
}

Group open_group(const Object& loc, const std::string& name) {
  return Group(id_at(H5Gopen2(loc.id(), name.c_str(), H5P_DEFAULT), loc, "H5Gopen", name), loc.file());
}

bool link_exists(const Object& loc, const std::string& name) {
  const htri_t rc = H5Lexists(loc.id(), name.c_str(), H5P_DEFAULT);
  if (rc < 0) fail_at(loc, "H5Lexists", name);
  return rc > 0;
}

std::vector<std::string> link_names(const Object& loc) {
  std::vector<std::string> names;
  hsize_t idx = 0;
  if (H5Literate(loc.id(), H5_INDEX_NAME, H5_ITER_INC, &idx, collect_link, &names) < 0)
    fail_at(loc, "H5Literate", ".");
  std::sort(names.begin(), names.end());
  return names;
}

std::string object_path(const Object& obj) {
  const ssize_t n = H5Iget_name(obj.id(), nullptr, 0);
  if (n <= 0) return "?";
  std::string name(static_cast<size_t>(n) + 1, '\0');
  H5Iget_name(obj.id(), name.data(), name.size());
  name.resize(static_cast<size_t>(n));
  return name;
}

void copy_object(const Object& src_loc, const std::string& src_name, const Object& dst_loc,
                 const std::string& dst_name) {
  if (H5Ocopy(src_loc.id(), src_name.c_str(), dst_loc.id(), dst_name.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0) {
    std::string stack = error_stack_text();
    throw Error("H5Ocopy " + src_name + " to " + dst_loc.file() + ":" + join_name(dst_loc, dst_name),
                src_loc.file(), std::move(stack));
  }
}

// ---- attributes ----------------------------------------------------------------------

bool attribute_exists(const Object& obj, const std::string& name) {
  const htri_t rc = H5Aexists(obj.id(), name.c_str());
  if (rc < 0) fail_at(obj, "H5Aexists", "@" + name);
  return rc > 0;
}

void delete_attribute(const Object& obj, const std::string& name) {
  ok_at(H5Adelete(obj.id(), name.c_str()), obj, "H5Adelete", "@" + name);
}

void write_int_attribute(const Object& obj, const std::string& name, long long value) {
  Dataspace space = scalar_space(obj.file());
  Attribute a(id_at(H5Acreate2(obj.id(), name.c_str(), H5T_STD_I64LE, space.id(), H5P_DEFAULT, H5P_DEFAULT), obj,
                       "H5Acreate", "@" + name),
              obj.file());
  ok_at(H5Awrite(a.id(), H5T_NATIVE_LLONG, &value), obj, "H5Awrite", "@" + name);
}

void write_string_attribute(const Object& obj, const std::string& name, const std::string& value) {
  // Fixed-length: the text then lives in the (checksummed) object header, not the global heap.
  Datatype type = utf8_string_type(obj.file(), std::max<size_t>(value.size(), 1));
  Dataspace space = scalar_space(obj.file());
  Attribute a(id_at(H5Acreate2(obj.id(), name.c_str(), type.id(), space.id(), H5P_DEFAULT, H5P_DEFAULT), obj,
                       "H5Acreate", "@" + name),
              obj.file());
  std::string buf = value.empty() ? std::string(1, '\0') : value;
  ok_at(H5Awrite(a.id(), type.id(), buf.data()), obj, "H5Awrite", "@" + name);
}

std::optional<long long> read_int_attribute(const Object& obj, const std::string& name) {
  if (!attribute_exists(obj, name)) return std::nullopt;
  Attribute a(id_at(H5Aopen(obj.id(), name.c_str(), H5P_DEFAULT), obj, "H5Aopen", "@" + name), obj.file());
  Datatype t(id_at(H5Aget_type(a.id()), obj, "H5Aget_type", "@" + name), obj.file());
  if (type_class(t.id(), obj.file()) != H5T_INTEGER) throw Error("read @" + name + " (not an integer)", obj.file(), "");
  // One value only: H5Aread writes every element, and the buffer holds one.
  Dataspace s(id_at(H5Aget_space(a.id()), obj, "H5Aget_space", "@" + name), obj.file());
  if (point_count(s.id(), obj.file()) != 1) throw Error("read @" + name + " (not a single integer)", obj.file(), "");
  long long v = 0;
  ok_at(H5Aread(a.id(), H5T_NATIVE_LLONG, &v), obj, "H5Aread", "@" + name);
  return v;
}

std::optional<std::string> read_string_attribute(const Object& obj, const std::string& name) {
  if (!attribute_exists(obj, name)) return std::nullopt;
  Attribute a(id_at(H5Aopen(obj.id(), name.c_str(), H5P_DEFAULT), obj, "H5Aopen", "@" + name), obj.file());
  Datatype t(id_at(H5Aget_type(a.id()), obj, "H5Aget_type", "@" + name), obj.file());
  Dataspace s(id_at(H5Aget_space(a.id()), obj, "H5Aget_space", "@" + name), obj.file());
  if (point_count(s.id(), obj.file()) != 1)
    throw Error("read @" + name + " (not a single string)", obj.file(), "");
  return read_string_value(t.id(), obj.file(), [&](hid_t mem, void* buf) {
    ok_at(H5Aread(a.id(), mem, buf), obj, "H5Aread", "@" + name);
  });
}

// ---- datasets ------------------------------------------------------------------------

Dataset open_dataset(const Object& loc, const std::string& name) {
  return Dataset(id_at(H5Dopen2(loc.id(), name.c_str(), H5P_DEFAULT), loc, "H5Dopen", name), loc.file());
}

Dataset write_string_dataset(const Object& loc, const std::string& name, const std::string& text) {
  const std::string& file = loc.file();
  // NULLPAD strings need at least one byte; an empty text is one NUL, read back as "".
  const std::string bytes = text.empty() ? std::string(1, '\0') : text;
  Datatype type = utf8_string_type(file, bytes.size());
  const hsize_t dims[1] = {1};
  Dataspace space(check_id(H5Screate_simple(1, dims, nullptr), "H5Screate_simple", file), file);
  Plist dcpl = make_plist(H5P_DATASET_CREATE, file);
  check(H5Pset_chunk(dcpl.id(), 1, dims), "H5Pset_chunk", file);
  check(H5Pset_fletcher32(dcpl.id()), "H5Pset_fletcher32", file);
  check(H5Pset_fill_time(dcpl.id(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time", file);
  Dataset ds(id_at(H5Dcreate2(loc.id(), name.c_str(), type.id(), space.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT),
                   loc, "H5Dcreate", name),
             file);
  ok_at(H5Dwrite(ds.id(), type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()), loc, "H5Dwrite", name);
  return ds;
}

std::string read_string_dataset(const Dataset& ds) {
  Datatype t(id_at(H5Dget_type(ds.id()), ds, "H5Dget_type", ""), ds.file());
  Dataspace s(id_at(H5Dget_space(ds.id()), ds, "H5Dget_space", ""), ds.file());
  if (point_count(s.id(), ds.file()) != 1)
    throw Error("read " + object_path(ds) + " (not a single string)", ds.file(), "");
  return read_string_value(t.id(), ds.file(), [&](hid_t mem, void* buf) {
    ok_at(H5Dread(ds.id(), mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), ds, "H5Dread", "");
  });
}

void write_f64_dataset(const Object& loc, const std::string& name, const std::vector<double>& values,
                       bool unlimited) {
  const std::string& file = loc.file();
  const hsize_t n = values.size();
  const hsize_t dims[1] = {n};
  const hsize_t maxdims[1] = {unlimited ? H5S_UNLIMITED : n};
  const hsize_t chunk[1] = {std::clamp<hsize_t>(n, 1, kMaxChunk)};
  Dataspace space(check_id(H5Screate_simple(1, dims, maxdims), "H5Screate_simple", file), file);
  Plist dcpl = make_plist(H5P_DATASET_CREATE, file);
  check(H5Pset_chunk(dcpl.id(), 1, chunk), "H5Pset_chunk", file);
  check(H5Pset_fletcher32(dcpl.id()), "H5Pset_fletcher32", file);
  // Every chunk is written in full right away: filling it first is wasted work.
  check(H5Pset_fill_time(dcpl.id(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time", file);
  Dataset ds(id_at(H5Dcreate2(loc.id(), name.c_str(), H5T_IEEE_F64LE, space.id(), H5P_DEFAULT, dcpl.id(),
                                 H5P_DEFAULT),
                      loc, "H5Dcreate", name),
             file);
  if (n > 0)
    ok_at(H5Dwrite(ds.id(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), loc, "H5Dwrite",
             name);
}

bool is_float_1d(const Dataset& ds) {
  Datatype t(id_at(H5Dget_type(ds.id()), ds, "H5Dget_type", ""), ds.file());
  Dataspace s(id_at(H5Dget_space(ds.id()), ds, "H5Dget_space", ""), ds.file());
  const int rank = H5Sget_simple_extent_ndims(s.id());
  if (rank < 0) fail_at(ds, "H5Sget_simple_extent_ndims", "");
  return type_class(t.id(), ds.file()) == H5T_FLOAT && rank == 1;
}

std::vector<double> read_f64_dataset(const Dataset& ds) {
  if (!is_float_1d(ds)) throw Error("read " + object_path(ds) + " (not a 1-D float dataset)", ds.file(), "");
  Dataspace s(id_at(H5Dget_space(ds.id()), ds, "H5Dget_space", ""), ds.file());
  hsize_t dims[1] = {0};
  ok_at(H5Sget_simple_extent_dims(s.id(), dims, nullptr), ds, "H5Sget_simple_extent_dims", "");
  std::vector<double> values(dims[0]);
  if (!values.empty())
    ok_at(H5Dread(ds.id(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), ds, "H5Dread", "");
  return values;
}

bool has_fletcher32(const Dataset& ds) {
  Plist dcpl(id_at(H5Dget_create_plist(ds.id()), ds, "H5Dget_create_plist", ""), ds.file());
  const H5D_layout_t layout = H5Pget_layout(dcpl.id());
  if (layout == H5D_LAYOUT_ERROR) fail_at(ds, "H5Pget_layout", "");
  if (layout != H5D_CHUNKED) return false;
  const int n = H5Pget_nfilters(dcpl.id());
  if (n < 0) fail_at(ds, "H5Pget_nfilters", "");
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, config = 0;
    size_t nelmts = 0;
    const H5Z_filter_t id =
        H5Pget_filter2(dcpl.id(), static_cast<unsigned>(i), &flags, &nelmts, nullptr, 0, nullptr, &config);
    if (id < 0) fail_at(ds, "H5Pget_filter", "");
    if (id == H5Z_FILTER_FLETCHER32) return true;
  }
  return false;
}

// ---- arrays of numbers ---------------------------------------------------------------

void write_array_dataset(const Object& loc, const std::string& name, hid_t file_type, hid_t mem_type,
                         const std::vector<hsize_t>& dims, const void* data) {
  const std::string& file = loc.file();
  const int rank = static_cast<int>(dims.size());
  if (rank < 1 || rank > 32) throw Error("H5Dcreate " + name + " (rank must be 1 to 32)", file, "");
  // Rows of the leading dimension per chunk: about 1 MiB (a whole row at least), so that
  // chunks stay far below HDF5's 4 GiB limit and the chunk index stays small.
  const std::size_t element = H5Tget_size(file_type);
  if (element == 0) fail("H5Tget_size", file);
  hsize_t row_bytes = element;
  for (int i = 1; i < rank; ++i) row_bytes *= std::max<hsize_t>(dims[static_cast<std::size_t>(i)], 1);
  std::vector<hsize_t> chunk(dims.size()), maxdims(dims.size(), H5S_UNLIMITED);
  chunk[0] = std::clamp<hsize_t>((hsize_t{1} << 20) / row_bytes, 1, std::max<hsize_t>(dims[0], 1));
  for (std::size_t i = 1; i < dims.size(); ++i) chunk[i] = std::max<hsize_t>(dims[i], 1);
  Dataspace space(check_id(H5Screate_simple(rank, dims.data(), maxdims.data()), "H5Screate_simple", file), file);
  Plist dcpl = make_plist(H5P_DATASET_CREATE, file);
  check(H5Pset_chunk(dcpl.id(), rank, chunk.data()), "H5Pset_chunk", file);
  check(H5Pset_fletcher32(dcpl.id()), "H5Pset_fletcher32", file);
  check(H5Pset_fill_time(dcpl.id(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time", file);
  Dataset ds(id_at(H5Dcreate2(loc.id(), name.c_str(), file_type, space.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT),
                   loc, "H5Dcreate", name),
             file);
  hsize_t n = 1;
  for (auto d : dims) n *= d;
  if (n > 0) ok_at(H5Dwrite(ds.id(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), loc, "H5Dwrite", name);
}

std::vector<hsize_t> dataset_dims(const Dataset& ds) {
  Dataspace s(id_at(H5Dget_space(ds.id()), ds, "H5Dget_space", ""), ds.file());
  const int rank = H5Sget_simple_extent_ndims(s.id());
  if (rank < 0) fail_at(ds, "H5Sget_simple_extent_ndims", "");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0) ok_at(H5Sget_simple_extent_dims(s.id(), dims.data(), nullptr), ds, "H5Sget_simple_extent_dims", "");
  return dims;
}

std::optional<std::uint64_t> in_memory_bytes(const std::vector<hsize_t>& dims, std::size_t element_bytes) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const std::uint64_t memory = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
                                                     : std::numeric_limits<std::uint64_t>::max();
  std::uint64_t bytes = element_bytes;
  for (const hsize_t d : dims) {
    if (d != 0 && bytes > memory / d) return std::nullopt;
    bytes *= d;
  }
  if (bytes > memory) return std::nullopt;
  return bytes;
}

std::string readable_size_problem(const Dataset& ds, std::size_t element_bytes) {
  const std::vector<hsize_t> dims = dataset_dims(ds);
  std::string shape;
  for (std::size_t i = 0; i < dims.size(); ++i) shape += (i ? "x" : "") + std::to_string(dims[i]);
  if (!in_memory_bytes(dims, element_bytes)) return "has shape " + shape + ", more than this machine's memory could hold";
  const std::uint64_t needed = *in_memory_bytes(dims, dataset_element_type(ds).size);  // as stored, unfiltered
  if (needed == 0) return "";
  const hsize_t stored = H5Dget_storage_size(ds.id());
  Plist dcpl(id_at(H5Dget_create_plist(ds.id()), ds, "H5Dget_create_plist", ""), ds.file());
  const int filters = H5Pget_nfilters(dcpl.id());
  if (filters < 0) fail_at(ds, "H5Pget_nfilters", "");
  constexpr std::uint64_t kMaxExpansion = 70400;
  if (filters == 0 ? stored < needed : stored == 0 || needed / kMaxExpansion > stored)
    return "stores " + std::to_string(stored) + " bytes, too few for its shape " + shape + " (" + std::to_string(needed) +
           " bytes" + (filters > 0 ? " before compression" : "") + "): truncated, damaged or never written";
  return "";
}

ElementType dataset_element_type(const Dataset& ds) {
  Datatype t(id_at(H5Dget_type(ds.id()), ds, "H5Dget_type", ""), ds.file());
  ElementType e;
  e.type_class = type_class(t.id(), ds.file());
  e.size = H5Tget_size(t.id());
  if (e.size == 0) fail_at(ds, "H5Tget_size", "");
  if (e.type_class == H5T_INTEGER) {
    const H5T_sign_t sign = H5Tget_sign(t.id());
    if (sign == H5T_SGN_ERROR) fail_at(ds, "H5Tget_sign", "");
    e.is_signed = sign == H5T_SGN_2;
  }
  return e;
}

void read_array_dataset(const Dataset& ds, hid_t mem_type, void* out) {
  hsize_t n = 1;
  for (auto d : dataset_dims(ds)) n *= d;
  if (n == 0) return;
  ok_at(H5Dread(ds.id(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), ds, "H5Dread", "");
}

std::string library_version() {
  unsigned maj = 0, min = 0, rel = 0;
  H5get_libversion(&maj, &min, &rel);
  return std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(rel);
}

}  // namespace lrb::h5
