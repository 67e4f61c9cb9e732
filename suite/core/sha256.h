#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace lrb {
// Lower-case hex SHA-256 of the bytes (OpenSSL's libcrypto).
std::string sha256_hex(std::string_view bytes);
// The first 8 bytes of the SHA-256, big-endian, as an integer.
std::uint64_t sha256_u64(std::string_view bytes);
}  // namespace lrb
