#include "suite/core/file_digest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>

#include "suite/core/errors.h"
#include "suite/core/sha256.h"

namespace lrb {

namespace {

constexpr std::string_view kMagic = "lrbench-digest 1\n";

struct Header {
  std::string sha256;
  std::uint64_t bytes = 0;
};

// The fields of a header block; nullopt when the block is not one.
std::optional<Header> parse_header(std::string_view block) {
  if (block.size() < kDigestBlockBytes || block.substr(0, kMagic.size()) != kMagic) return std::nullopt;
  std::string_view rest = block.substr(kMagic.size(), kDigestBlockBytes - kMagic.size());
  const auto line = [&](std::string_view key) -> std::optional<std::string_view> {
    if (rest.substr(0, key.size()) != key) return std::nullopt;
    const auto end = rest.find('\n');
    if (end == std::string_view::npos) return std::nullopt;
    std::string_view value = rest.substr(key.size(), end - key.size());
    rest.remove_prefix(end + 1);
    return value;
  };
  Header h;
  const auto sha = line("sha256 ");
  if (!sha || sha->size() != 64 || sha->find_first_not_of("0123456789abcdef") != std::string_view::npos)
    return std::nullopt;
  h.sha256 = std::string(*sha);
  const auto bytes = line("bytes ");
  if (!bytes || bytes->empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(bytes->data(), bytes->data() + bytes->size(), h.bytes);
  if (ec != std::errc() || end != bytes->data() + bytes->size()) return std::nullopt;
  for (char c : rest)
    if (c != '\0') return std::nullopt;  // the padding is part of what is checked
  return h;
}

std::string header_text(const std::string& sha256, std::uint64_t body_bytes) {
  return std::string(kMagic) + "sha256 " + sha256 + "\nbytes " + std::to_string(body_bytes) + "\n";
}

const std::string kNoDigest =
    "no whole-file digest (written by an older lrbench, or damaged at its start): it cannot be trusted";

std::string size_problem(std::uint64_t body, const Header& h) {
  if (body < h.bytes)
    return "truncated: " + std::to_string(body) + " of the " + std::to_string(h.bytes) +
           " bytes its digest covers";
  return "bytes appended after the end: " + std::to_string(body) + " where its digest covers " +
         std::to_string(h.bytes);
}

const std::string kMismatch =
    "checksum error: the file's SHA-256 differs from the digest written with it (bytes changed after it was written)";

}  // namespace

void seal_digest(char* bytes, std::size_t size) {
  LRB_CHECK(size >= kDigestBlockBytes, "a sealed file reserves its digest block");
  const std::string_view body(bytes + kDigestBlockBytes, size - kDigestBlockBytes);
  const std::string header = header_text(sha256_hex(body), body.size());
  LRB_CHECK(header.size() < kDigestBlockBytes, "the digest header fits its block");
  std::memset(bytes, 0, kDigestBlockBytes);
  std::memcpy(bytes, header.data(), header.size());
}

void seal_digest(std::string& bytes) { seal_digest(bytes.data(), bytes.size()); }

void seal_file_digest(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) throw EnvironmentError("cannot open " + path.string() + " to seal its digest: " + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  const auto fail = [&](const std::string& what) {
    throw EnvironmentError(what + " " + path.string() + " failed: " + std::strerror(errno));
  };
  Sha256 sha;
  std::uint64_t body = 0;
  const std::unique_ptr<char[]> storage(new char[1 << 20]);
  while (true) {
    const ssize_t n = ::pread(fd, storage.get(), 1 << 20, static_cast<off_t>(kDigestBlockBytes + body));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("reading back");
    if (n == 0) break;
    sha.update(std::string_view(storage.get(), static_cast<std::size_t>(n)));
    body += static_cast<std::uint64_t>(n);
  }
  const std::string header = header_text(sha.hex(), body);
  LRB_CHECK(header.size() < kDigestBlockBytes, "the digest header fits its block");
  std::string block(kDigestBlockBytes, '\0');
  std::memcpy(block.data(), header.data(), header.size());
  std::size_t done = 0;
  while (done < block.size()) {
    const ssize_t n = ::pwrite(fd, block.data() + done, block.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      fail("writing the digest of");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail("fsync of");
}

std::string sealed_bytes_problem(std::string_view bytes) {
  if (bytes.empty()) return "cannot open: empty file";
  const auto h = parse_header(bytes.substr(0, std::min(bytes.size(), kDigestBlockBytes)));
  if (!h) return kNoDigest;
  const std::string_view body = bytes.substr(kDigestBlockBytes);
  if (body.size() != h->bytes) return size_problem(body.size(), *h);
  if (sha256_hex(body) != h->sha256) return kMismatch;
  return "";
}

std::string digest_problem(const std::filesystem::path& path) {
  struct ::stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno == ENOENT ? "missing" : "cannot open: " + std::string(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (st.st_size == 0) return "cannot open: empty file";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "cannot open: " + std::string(std::strerror(errno));
  std::string block(kDigestBlockBytes, '\0');
  std::string problem;
  Sha256 sha;
  std::uint64_t body = 0;
  std::size_t got = 0;
  std::optional<Header> h;
  // Not a std::string: zero-filling 1 MiB per file was a tenth of a merge's time.
  const std::unique_ptr<char[]> storage(new char[1 << 20]);
  const std::string_view buf(storage.get(), 1 << 20);
  while (true) {
    const ssize_t n = ::read(fd, storage.get(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      problem = "cannot read: " + std::string(std::strerror(errno));
      break;
    }
    if (n == 0) break;
    std::string_view chunk(buf.data(), static_cast<std::size_t>(n));
    if (got < kDigestBlockBytes) {
      const std::size_t take = std::min(kDigestBlockBytes - got, chunk.size());
      std::memcpy(block.data() + got, chunk.data(), take);
      got += take;
      chunk.remove_prefix(take);
      if (got == kDigestBlockBytes && !(h = parse_header(block))) {
        problem = kNoDigest;
        break;
      }
    }
    sha.update(chunk);
    body += chunk.size();
  }
  ::close(fd);
  if (!problem.empty()) return problem;
  if (!h) return kNoDigest;  // shorter than the block
  if (body != h->bytes) return size_problem(body, *h);
  if (sha.hex() != h->sha256) return kMismatch;
  return "";
}

std::string read_sealed_file(const std::filesystem::path& path, std::string& bytes) {
  bytes.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return errno == ENOENT ? "missing" : "cannot open: " + std::string(std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct ::stat st {};
  if (::fstat(fd, &st) != 0) return "cannot open: " + std::string(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (st.st_size == 0) return "cannot open: empty file";
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const auto read_exactly = [&](char* to, std::size_t count, std::uint64_t at) -> std::string {
    std::size_t got = 0;
    while (got < count) {
      const ssize_t n = ::pread(fd, to + got, count - got, static_cast<off_t>(at + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return "cannot read: " + std::string(std::strerror(errno));
      if (n == 0) return "truncated while it was read (the file changed; try again)";
      got += static_cast<std::size_t>(n);
    }
    return "";
  };
  // The header first: its length decides whether the body is worth reading (a damaged
  // header, or one claiming more than the file holds, is refused without reading on).
  std::string block(std::min<std::uint64_t>(size, kDigestBlockBytes), '\0');
  if (std::string problem = read_exactly(block.data(), block.size(), 0); !problem.empty()) return problem;
  const auto h = parse_header(block);
  if (!h) return kNoDigest;
  if (size - kDigestBlockBytes != h->bytes) return size_problem(size - kDigestBlockBytes, *h);
  // A file as large as the machine's memory is not read into it (overcommitted, the
  // reader would be killed instead of told).
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const std::uint64_t memory = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
                                                     : std::numeric_limits<std::size_t>::max();
  if (size > memory / 2 || size > std::numeric_limits<std::size_t>::max() / 2)
    return "too large to read into memory: " + std::to_string(size) + " bytes, on a machine of " + std::to_string(memory);
  try {
    bytes.resize(static_cast<std::size_t>(size));
  } catch (const std::bad_alloc&) {
    return "too large to read into memory (" + std::to_string(size) + " bytes)";
  }
  std::memcpy(bytes.data(), block.data(), block.size());
  if (std::string problem = read_exactly(bytes.data() + kDigestBlockBytes, bytes.size() - kDigestBlockBytes, kDigestBlockBytes);
      !problem.empty()) {
    bytes.clear();
    return problem;
  }
  std::string problem = sealed_bytes_problem(bytes);
  if (!problem.empty()) bytes.clear();
  return problem;
}

}  // namespace lrb
