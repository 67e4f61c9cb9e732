#include "workloads/torchscript/zip_check.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>

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

// The CRC-32 and length of a raw deflate stream's output; false when it does not inflate.
bool inflated_crc(std::string_view body, uLong& sum, std::uint64_t& size) {
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

}  // namespace

std::string zip_damage(std::string_view bytes) {
  try {
    const Reader r(bytes);
    const Directory d = find_directory(r);
    std::uint64_t at = d.offset;
    for (std::uint64_t i = 0; i < d.entries; ++i) {
      if (r.get(at, 4) != kCentralSignature) return "its central directory is damaged (entry " + std::to_string(i) + ")";
      const auto method = r.get(at + 10, 2);
      const auto crc = r.get(at + 16, 4);
      std::uint64_t compressed = r.get(at + 20, 4), size = r.get(at + 24, 4), local = r.get(at + 42, 4);
      const auto name_len = r.get(at + 28, 2), extra_len = r.get(at + 30, 2), comment_len = r.get(at + 32, 2);
      const std::string name(r.slice(at + 46, name_len));
      // The DOS folder bit: a reader then returns no bytes for the record, and the tensor
      // stored there would be left as whatever memory it got.
      if ((r.get(at + 38, 4) & 0x10) != 0) return "record '" + name + "' is marked as a folder";
      widen(r, at + 46 + name_len, extra_len, size, compressed, local);
      if (r.get(local, 4) != kLocalSignature) return "the header of record '" + name + "' is damaged";
      const std::uint64_t data = local + 30 + r.get(local + 26, 2) + r.get(local + 28, 2);
      const std::string_view body = r.slice(data, compressed);
      if (method == kStored) {
        if (compressed != size) return "record '" + name + "' has two different sizes";
        if (crc_of(::crc32(0L, Z_NULL, 0), body.data(), body.size()) != crc) return "record '" + name + "' fails its CRC-32 check";
      } else if (method == kDeflated) {
        uLong sum = 0;
        std::uint64_t made = 0;
        if (!inflated_crc(body, sum, made)) return "record '" + name + "' does not decompress";
        if (made != size || sum != crc) return "record '" + name + "' fails its CRC-32 check";
      } else {
        return "record '" + name + "' is compressed with method " + std::to_string(method) + ", which torch.jit.save never uses";
      }
      at += 46 + name_len + extra_len + comment_len;
    }
    return "";
  } catch (const std::string& why) {
    return why;
  }
}

}  // namespace lrb
