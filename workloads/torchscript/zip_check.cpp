#include "workloads/torchscript/zip_check.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lrb {
namespace {

constexpr std::uint32_t kEndSignature = 0x06054b50, kZip64EndSignature = 0x06064b50, kZip64LocatorSignature = 0x07064b50,
                        kCentralSignature = 0x02014b50, kLocalSignature = 0x04034b50;
constexpr std::uint16_t kZip64Extra = 0x0001, kStored = 0, kDeflated = 8;

// Little-endian fields read with their bounds checked: a read past the end is damage.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool has(std::uint64_t at, std::uint64_t n) const { return at <= bytes_.size() && n <= bytes_.size() - at; }
  std::uint64_t get(std::uint64_t at, int width) const {
    if (!has(at, static_cast<std::uint64_t>(width))) throw std::string("a header runs past the end of the file");
    std::uint64_t v = 0;
    for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes_[at + static_cast<std::uint64_t>(i)]);
    return v;
  }
  std::string_view slice(std::uint64_t at, std::uint64_t n) const {
    if (!has(at, n)) throw std::string("a record runs past the end of the file");
    return bytes_.substr(at, n);
  }
  std::uint64_t size() const { return bytes_.size(); }

 private:
  std::string_view bytes_;
};

uLong crc_of(uLong sum, const char* data, std::uint64_t size) {
  for (std::uint64_t done = 0; done < size;) {  // zlib takes at most 4 GiB at a time
    const auto n = static_cast<uInt>(std::min<std::uint64_t>(size - done, 1u << 30));
    sum = ::crc32(sum, reinterpret_cast<const Bytef*>(data + done), n);
    done += n;
  }
  return sum;
}

// The CRC-32 and length of a raw deflate stream's output; false when it does not inflate,
// or would inflate past `limit` (its declared size: a zip bomb is stopped there).
bool inflated_crc(std::string_view body, std::uint64_t limit, uLong& sum, std::uint64_t& size) {
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return false;
  std::string out(1 << 16, '\0');
  sum = ::crc32(0L, Z_NULL, 0);
  size = 0;
  std::uint64_t fed = 0;
  int status = Z_OK;
  while (status == Z_OK) {
    if (z.avail_in == 0 && fed < body.size()) {
      const auto n = static_cast<uInt>(std::min<std::uint64_t>(body.size() - fed, 1u << 30));
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data() + fed));
      z.avail_in = n;
      fed += n;
    }
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    status = inflate(&z, Z_NO_FLUSH);
    const std::uint64_t made = out.size() - z.avail_out;
    sum = crc_of(sum, out.data(), made);
    size += made;
    if (size > limit) break;
    if (status == Z_BUF_ERROR && made > 0) status = Z_OK;  // room was all it needed
  }
  inflateEnd(&z);
  return status == Z_STREAM_END;
}

struct Directory {
  std::uint64_t entries = 0, offset = 0;
};

Directory find_directory(const Reader& r) {
  // The end record is the last 22 bytes, before a comment of at most 65,535.
  if (r.size() < 22) throw std::string("it is too short to be a zip archive");
  const std::uint64_t lowest = r.size() > 22 + 65535 ? r.size() - 22 - 65535 : 0;
  for (std::uint64_t at = r.size() - 22;; --at) {
    if (r.get(at, 4) == kEndSignature) {
      Directory d{r.get(at + 10, 2), r.get(at + 16, 4)};
      if ((d.entries == 0xFFFF || d.offset == 0xFFFFFFFF) && at >= 20 && r.get(at - 20, 4) == kZip64LocatorSignature) {
        const std::uint64_t end64 = r.get(at - 20 + 8, 8);
        if (r.get(end64, 4) != kZip64EndSignature) throw std::string("its zip64 end record is missing");
        d = {r.get(end64 + 32, 8), r.get(end64 + 48, 8)};
      }
      return d;
    }
    if (at == lowest) break;
  }
  throw std::string("it has no zip end record (truncated, or not a zip archive)");
}

// The zip64 extra field replaces whichever of the sizes and offset are 0xFFFFFFFF, in order.
void widen(const Reader& r, std::uint64_t extra, std::uint64_t extra_len, std::uint64_t& size, std::uint64_t& compressed,
           std::uint64_t& offset) {
  for (std::uint64_t at = extra; at + 4 <= extra + extra_len;) {
    const auto id = r.get(at, 2), len = r.get(at + 2, 2);
    if (id == kZip64Extra) {
      std::uint64_t field = at + 4;
      for (std::uint64_t* v : {&size, &compressed, &offset})
        if (*v == 0xFFFFFFFF) *v = r.get(field, 8), field += 8;
      return;
    }
    at += 4 + len;
  }
}

// One record as the central directory and its local header describe it.
struct Record {
  std::string name;
  std::uint64_t method = 0, crc = 0, size = 0, local = 0, data = 0, compressed = 0;
};

// Every record of the central directory, its headers checked; throws the damage.
std::vector<Record> records_of(const Reader& r) {
  const Directory d = find_directory(r);
  std::vector<Record> out;
  std::uint64_t at = d.offset;
  for (std::uint64_t i = 0; i < d.entries; ++i) {
    if (r.get(at, 4) != kCentralSignature) throw "its central directory is damaged (entry " + std::to_string(i) + ")";
    Record rec;
    rec.method = r.get(at + 10, 2);
    rec.crc = r.get(at + 16, 4);
    rec.compressed = r.get(at + 20, 4);
    rec.size = r.get(at + 24, 4);
    rec.local = r.get(at + 42, 4);
    const auto name_len = r.get(at + 28, 2), extra_len = r.get(at + 30, 2), comment_len = r.get(at + 32, 2);
    rec.name = std::string(r.slice(at + 46, name_len));
    // The DOS folder bit: a reader then returns no bytes for the record, and the tensor
    // stored there would be left as whatever memory it got.
    if ((r.get(at + 38, 4) & 0x10) != 0) throw "record '" + rec.name + "' is marked as a folder";
    widen(r, at + 46 + name_len, extra_len, rec.size, rec.compressed, rec.local);
    if (r.get(rec.local, 4) != kLocalSignature) throw "the header of record '" + rec.name + "' is damaged";
    rec.data = rec.local + 30 + r.get(rec.local + 26, 2) + r.get(rec.local + 28, 2);
    (void)r.slice(rec.data, rec.compressed);  // inside the file
    out.push_back(std::move(rec));
    at += 46 + name_len + extra_len + comment_len;
  }
  return out;
}

}  // namespace

std::string zip_damage(std::string_view bytes) {
  try {
    const Reader r(bytes);
    std::vector<Record> records = records_of(r);
    // Records sharing bytes are how a small file inflates to gigabytes (the same compressed
    // data read once per entry): refused before anything is inflated. torch.jit.save
    // writes each record once.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
    for (const auto& rec : records) spans.emplace_back(rec.local, rec.data + rec.compressed);
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i)
      if (spans[i].first < spans[i - 1].second) return "two of its records share bytes (a zip bomb's shape)";
    for (const auto& rec : records) {
      const std::string_view body = r.slice(rec.data, rec.compressed);
      if (rec.method == kStored) {
        if (rec.compressed != rec.size) return "record '" + rec.name + "' has two different sizes";
        if (crc_of(::crc32(0L, Z_NULL, 0), body.data(), body.size()) != rec.crc) return "record '" + rec.name + "' fails its CRC-32 check";
      } else if (rec.method == kDeflated) {
        uLong sum = 0;
        std::uint64_t made = 0;
        if (!inflated_crc(body, rec.size, sum, made)) return "record '" + rec.name + "' does not decompress to its size";
        if (made != rec.size || sum != rec.crc) return "record '" + rec.name + "' fails its CRC-32 check";
      } else {
        return "record '" + rec.name + "' is compressed with method " + std::to_string(rec.method) + ", which torch.jit.save never uses";
      }
    }
    return "";
  } catch (const std::string& why) {
    return why;
  }
}

}  // namespace lrb
