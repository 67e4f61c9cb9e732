#include "suite/core/sha256.h"

#include <openssl/evp.h>

#include "suite/core/errors.h"

namespace lrb {
namespace {
void digest(std::string_view bytes, unsigned char out[32]) {
  unsigned int len = 0;
  int ok = EVP_Digest(bytes.data(), bytes.size(), out, &len, EVP_sha256(), nullptr);
  LRB_CHECK(ok == 1 && len == 32, "EVP_Digest(sha256) failed");
}
}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char d[32];
  digest(bytes, d);
  static const char* hex = "0123456789abcdef";
  std::string s(64, '0');
  for (int i = 0; i < 32; ++i) {
    s[2 * i] = hex[d[i] >> 4];
    s[2 * i + 1] = hex[d[i] & 15];
  }
  return s;
}

std::uint64_t sha256_u64(std::string_view bytes) {
  unsigned char d[32];
  digest(bytes, d);
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | d[i];
  return v;
}

}  // namespace lrb
