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

std::string to_hex(const unsigned char d[32]) {
  static const char* hex = "0123456789abcdef";
  std::string s(64, '0');
  for (int i = 0; i < 32; ++i) {
    s[2 * i] = hex[d[i] >> 4];
    s[2 * i + 1] = hex[d[i] & 15];
  }
  return s;
}
}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char d[32];
  digest(bytes, d);
  return to_hex(d);
}

std::uint64_t sha256_u64(std::string_view bytes) {
  unsigned char d[32];
  digest(bytes, d);
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | d[i];
  return v;
}

struct Sha256::Context {
  EVP_MD_CTX* md = nullptr;
};

Sha256::Sha256() : ctx_(std::make_unique<Context>()) {
  ctx_->md = EVP_MD_CTX_new();
  LRB_CHECK(ctx_->md != nullptr && EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) == 1,
            "EVP_DigestInit(sha256) failed");
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_->md); }

void Sha256::update(std::string_view bytes) {
  LRB_CHECK(EVP_DigestUpdate(ctx_->md, bytes.data(), bytes.size()) == 1, "EVP_DigestUpdate(sha256) failed");
}

std::string Sha256::hex() {
  unsigned char d[32];
  unsigned int len = 0;
  LRB_CHECK(EVP_DigestFinal_ex(ctx_->md, d, &len) == 1 && len == 32, "EVP_DigestFinal(sha256) failed");
  return to_hex(d);
}

}  // namespace lrb
