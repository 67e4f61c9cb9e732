#include "workloads/loaders/idx.h"

#include <ATen/ATen.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "suite/core/errors.h"
#include "suite/core/file_cache.h"
#include "suite/core/shape_text.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

struct TypeInfo {
  std::uint8_t code;
  at::ScalarType dtype;
  int bytes;
  const char* name;
};

const TypeInfo* type_info(std::uint8_t code) {
  static const TypeInfo types[] = {{0x08, at::kByte, 1, "unsigned byte"}, {0x09, at::kChar, 1, "signed byte"},
                                   {0x0B, at::kShort, 2, "short"},        {0x0C, at::kInt, 4, "int"},
                                   {0x0D, at::kFloat, 4, "float"},        {0x0E, at::kDouble, 8, "double"}};
  for (const auto& t : types)
    if (t.code == code) return &t;
  return nullptr;
}

// gzread reads plain files unchanged, so one reader serves .gz and raw idx.
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) throw UserError(path + ": no such file; check the task's path options");
    if (fs::is_directory(path, ec)) throw UserError(path + ": is a folder, expected an idx file");
    f_ = gzopen(path.c_str(), "rb");
    if (!f_) throw UserError(path + ": cannot open for reading");
    gzbuffer(f_, 1 << 17);
  }
  ~Reader() {
    if (f_) gzclose(f_);
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Reads up to n bytes; returns how many were read. UserError on a corrupt stream.
  std::int64_t read(void* out, std::int64_t n) {
    std::int64_t got = 0;
    auto* p = static_cast<char*>(out);
    while (got < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<std::int64_t>(n - got, 1 << 30));
      const int r = gzread(f_, p + got, chunk);
      if (r < 0) {
        int err = 0;
        const char* msg = gzerror(f_, &err);
        if (err == Z_BUF_ERROR) {  // gzip stream cut short: report as truncation
          truncated_ = true;
          break;
        }
        throw UserError(path_ + ": cannot read (" + std::string(msg ? msg : "error") +
                        "); the file is damaged, re-download or re-create it");
      }
      if (r == 0) break;
      got += r;
    }
    return got;
  }
  // gzip data cut short reads as a short read with a buffer error.
  bool truncated_stream() const { return truncated_; }

 private:
  std::string path_;
  gzFile f_ = nullptr;
  bool truncated_ = false;
};

std::uint32_t big_endian_u32(const unsigned char* b) {
  return (std::uint32_t(b[0]) << 24) | (std::uint32_t(b[1]) << 16) | (std::uint32_t(b[2]) << 8) | std::uint32_t(b[3]);
}

[[noreturn]] void cut_gzip(const std::string& path) {
  throw UserError(path + ": truncated: the gzip data ends before the idx header does; re-download or re-create the file");
}

IdxHeader parse_header(Reader& r, const std::string& path) {
  unsigned char magic[4];
  if (r.read(magic, 4) < 4) {
    if (r.truncated_stream()) cut_gzip(path);
    throw UserError(path + ": too short to be an idx file (no 4-byte magic number)");
  }
  if (magic[0] != 0 || magic[1] != 0 || !type_info(magic[2]) || magic[3] == 0)
    throw UserError(path + ": not an idx file (magic bytes " + std::to_string(magic[0]) + " " + std::to_string(magic[1]) +
                    " " + std::to_string(magic[2]) + " " + std::to_string(magic[3]) +
                    "; expected 0 0 <type 8,9,11,12,13,14> <dimensions>)");
  IdxHeader h;
  h.type = magic[2];
  std::vector<unsigned char> raw(4 * magic[3]);
  if (r.read(raw.data(), static_cast<std::int64_t>(raw.size())) < static_cast<std::int64_t>(raw.size())) {
    if (r.truncated_stream()) cut_gzip(path);
    throw UserError(path + ": truncated in its header (" + std::to_string(magic[3]) + " dimension sizes expected)");
  }
  // At most 2^40 elements, checked before each product (which could otherwise overflow).
  constexpr std::int64_t kMaxElements = std::int64_t(1) << 40;
  std::int64_t total = 1;
  for (int i = 0; i < magic[3]; ++i) {
    const std::int64_t d = big_endian_u32(&raw[4 * i]);
    h.dims.push_back(d);
    if (d > 1 && total > kMaxElements / d)
      throw UserError(path + ": header claims an array of more than 2^40 elements; the file is damaged");
    total *= std::max<std::int64_t>(d, 1);
  }
  return h;
}

}  // namespace

IdxHeader read_idx_header(const std::string& path) {
  Reader r(path);
  return parse_header(r, path);
}

at::Tensor read_idx(const std::string& path) {
  Reader r(path);
  const IdxHeader h = parse_header(r, path);
  const TypeInfo* t = type_info(h.type);
  std::int64_t elements = 1;
  for (const auto d : h.dims) elements *= d;  // at most 2^40 (parse_header)
  const std::int64_t want = elements * t->bytes;
  // Read in pieces before the array is allocated: a damaged header may claim terabytes,
  // and only the bytes that are really there may cost memory.
  std::vector<std::uint8_t> data;
  std::int64_t got = 0;
  while (got < want) {
    // Pieces double (64 KiB, then as much as already read): linear in what is there.
    const std::int64_t piece = std::min(std::max<std::int64_t>(got, 64 << 10), want - got);
    data.resize(static_cast<std::size_t>(got + piece));
    const std::int64_t n = r.read(data.data() + got, piece);
    got += n;
    if (n < piece) break;
  }
  if (got < want || r.truncated_stream())
    throw UserError(path + ": truncated: the header says " + shape_text(h.dims) + " " + t->name + " elements (" +
                    std::to_string(want) + " bytes) but the data ends after " + std::to_string(got) +
                    " bytes; re-download or re-create the file");
  char extra = 0;
  if (r.read(&extra, 1) > 0)
    throw UserError(path + ": has bytes after the " + shape_text(h.dims) +
                    " elements its header announces; the header and the data disagree");
  auto out = at::empty(h.dims, at::TensorOptions().dtype(t->dtype));
  if (want > 0) std::memcpy(out.data_ptr(), data.data(), static_cast<std::size_t>(want));
  data = {};
  // Elements are big-endian; swap in place on little-endian hosts.
  if (t->bytes > 1) {
    const std::uint16_t probe = 1;
    if (*reinterpret_cast<const std::uint8_t*>(&probe) == 1) {
      auto* p = static_cast<std::uint8_t*>(out.data_ptr());
      for (std::int64_t i = 0; i < out.numel(); ++i, p += t->bytes) std::reverse(p, p + t->bytes);
    }
  }
  return out;
}

namespace {

bool finite_element(const unsigned char* big_endian, const TypeInfo& t) {
  unsigned char host[8];
  const std::uint16_t probe = 1;
  const bool little = *reinterpret_cast<const std::uint8_t*>(&probe) == 1;
  for (int b = 0; b < t.bytes; ++b) host[b] = big_endian[little ? t.bytes - 1 - b : b];
  if (t.code == 0x0D) {
    float f;
    std::memcpy(&f, host, sizeof f);
    return std::isfinite(f);
  }
  double d;
  std::memcpy(&d, host, sizeof d);
  return std::isfinite(d);
}

void verify_uncached(const std::string& path) {
  Reader r(path);
  const IdxHeader h = parse_header(r, path);
  const TypeInfo* t = type_info(h.type);
  std::int64_t elements = 1;
  for (auto d : h.dims) elements *= d;
  const std::int64_t want = elements * t->bytes;
  const std::int64_t per_record = h.dims.empty() || h.dims[0] == 0 ? 1 : std::max<std::int64_t>(1, elements / h.dims[0]);
  const bool is_float = t->code == 0x0D || t->code == 0x0E;
  std::vector<unsigned char> buf(std::size_t{1} << 20);  // a multiple of every element size
  std::int64_t got = 0;
  while (got < want) {
    const std::int64_t n = r.read(buf.data(), std::min<std::int64_t>(want - got, static_cast<std::int64_t>(buf.size())));
    if (is_float)
      for (std::int64_t i = 0; i + t->bytes <= n; i += t->bytes)
        if (!finite_element(buf.data() + i, *t)) {
          const std::int64_t element = (got + i) / t->bytes;
          throw UserError(path + ": element " + std::to_string(element) + " (record " +
                          std::to_string(element / per_record) +
                          ") is not finite (NaN or infinity); clean or drop that record");
        }
    got += n;
    if (n == 0) break;
  }
  if (got < want || r.truncated_stream())
    throw UserError(path + ": truncated: the header says " + shape_text(h.dims) + " " + t->name + " elements (" +
                    std::to_string(want) + " bytes) but the data ends after " + std::to_string(got) +
                    " bytes; re-download or re-create the file");
  char extra = 0;
  if (r.read(&extra, 1) > 0)
    throw UserError(path + ": has bytes after the " + shape_text(h.dims) +
                    " elements its header announces; the header and the data disagree");
}

}  // namespace

void verify_idx(const std::string& path) {
  // Remembers only that a file (at its stamp) was verified: no bytes are kept.
  static FileCache<bool> verified([](const bool&) { return std::uint64_t{0}; }, {64, 0});
  verified.get(path, [](const std::string& p) {
    verify_uncached(p);  // throws for a bad file: nothing is remembered
    return true;
  });
}

at::Tensor read_idx_cached(const std::string& path) {
  static FileCache<at::Tensor> cache([](const at::Tensor& t) { return static_cast<std::uint64_t>(t.nbytes()); });
  return cache.get(path, [](const std::string& p) { return read_idx(p); });
}

void write_idx(const std::string& path, const at::Tensor& t, bool gzip) {
  const TypeInfo* info = nullptr;
  for (std::uint8_t code : {0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E})
    if (type_info(code)->dtype == t.scalar_type()) info = type_info(code);
  if (!info) throw UserError(path + ": idx has no element type for " + std::string(c10::toString(t.scalar_type())));
  LRB_CHECK(t.dim() >= 1 && t.dim() < 256, "write_idx: rank out of range");
  std::string bytes = {0, 0, static_cast<char>(info->code), static_cast<char>(t.dim())};
  for (auto d : t.sizes())
    for (int s = 24; s >= 0; s -= 8) bytes += static_cast<char>((static_cast<std::uint32_t>(d) >> s) & 0xff);
  const auto c = t.contiguous();
  const auto* p = static_cast<const char*>(c.data_ptr());
  const std::uint16_t probe = 1;
  const bool little = *reinterpret_cast<const std::uint8_t*>(&probe) == 1;
  for (std::int64_t i = 0; i < c.numel(); ++i)
    for (int b = 0; b < info->bytes; ++b) bytes += p[i * info->bytes + (little ? info->bytes - 1 - b : b)];
  gzFile f = gzopen(path.c_str(), gzip ? "wb6" : "wbT");
  if (!f) throw UserError(path + ": cannot open for writing");
  const int w = gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  if (gzclose(f) != Z_OK || w != static_cast<int>(bytes.size())) throw UserError(path + ": write failed");
}

}  // namespace lrb
