#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace lrb {
// Lower-case hex SHA-256 of the bytes (OpenSSL's libcrypto).
std::string sha256_hex(std::string_view bytes);
// The first 8 bytes of the SHA-256, big-endian, as an integer.
std::uint64_t sha256_u64(std::string_view bytes);

// SHA-256 over bytes fed in pieces (a file read in blocks).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes);
  std::string hex();  // lower-case hex; ends the digest

 private:
  struct Context;
  std::unique_ptr<Context> ctx_;
};
}  // namespace lrb
