#include "suite/nn/cpu/philox_blocks.h"

#include <ATen/core/PhiloxRNGEngine.h>

#include "suite/nn/cpu/simd.h"

#ifdef LRB_SIMD_X86
#include <immintrin.h>
#endif

namespace lrb {
namespace {

void blocks_one_at_a_time(std::uint64_t key, std::uint64_t first_block, std::int64_t blocks, std::uint32_t* out) {
  at::philox_engine draws(key, 0, first_block);
  for (std::int64_t i = 0; i < 4 * blocks; ++i) out[i] = draws();
}

#ifdef LRB_SIMD_X86
// The engine's constants (PhiloxRNGEngine.h keeps them private).
constexpr std::uint32_t kRoundKeyA = 0x9E3779B9, kRoundKeyB = 0xBB67AE85;
constexpr std::uint32_t kMultiplierA = 0xD2511F53, kMultiplierB = 0xCD9E8D57;

// The low and high halves of the 64-bit products m * x, lane by lane.
LRB_TARGET_AVX2 inline void mulhilo(__m256i m, __m256i x, __m256i* lo, __m256i* hi) {
  const __m256i even = _mm256_mul_epu32(x, m);                         // lanes 0, 2, 4, 6
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), m);   // lanes 1, 3, 5, 7
  *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

// Eight blocks, first_block .. first_block + 7, written in the engine's order.
LRB_TARGET_AVX2 inline void eight_blocks(std::uint32_t key0, std::uint32_t key1, std::uint64_t first_block, std::uint32_t* out) {
  alignas(32) std::uint32_t lo[8], hi[8];
  for (int l = 0; l < 8; ++l) {
    const std::uint64_t block = first_block + static_cast<std::uint64_t>(l);
    lo[l] = static_cast<std::uint32_t>(block);
    hi[l] = static_cast<std::uint32_t>(block >> 32);
  }
  // Counter (c0, c1, c2, c3) = (block low, block high, 0, 0): subsequence 0.
  __m256i c0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo));
  __m256i c1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi));
  __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
  const __m256i ma = _mm256_set1_epi32(static_cast<int>(kMultiplierA));
  const __m256i mb = _mm256_set1_epi32(static_cast<int>(kMultiplierB));
  std::uint32_t k0 = key0, k1 = key1;
  for (int round = 0; round < 10; ++round) {
    __m256i lo0, hi0, lo1, hi1;
    mulhilo(ma, c0, &lo0, &hi0);
    mulhilo(mb, c2, &lo1, &hi1);
    c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
    c1 = lo1;
    c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
    c3 = lo0;
    k0 += kRoundKeyA;
    k1 += kRoundKeyB;
  }
  // Word w of block l goes to out[4 l + w]: a 4 x 8 transpose.
  const __m256i ab_lo = _mm256_unpacklo_epi32(c0, c1), ab_hi = _mm256_unpackhi_epi32(c0, c1);
  const __m256i cd_lo = _mm256_unpacklo_epi32(c2, c3), cd_hi = _mm256_unpackhi_epi32(c2, c3);
  const __m256i b04 = _mm256_unpacklo_epi64(ab_lo, cd_lo), b15 = _mm256_unpackhi_epi64(ab_lo, cd_lo);
  const __m256i b26 = _mm256_unpacklo_epi64(ab_hi, cd_hi), b37 = _mm256_unpackhi_epi64(ab_hi, cd_hi);
  auto* o = reinterpret_cast<__m256i*>(out);
  _mm256_storeu_si256(o + 0, _mm256_permute2x128_si256(b04, b15, 0x20));
  _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(b26, b37, 0x20));
  _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(b04, b15, 0x31));
  _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(b26, b37, 0x31));
}

LRB_TARGET_AVX2 void blocks_avx2(std::uint64_t key, std::uint64_t first_block, std::int64_t blocks, std::uint32_t* out) {
  const auto key0 = static_cast<std::uint32_t>(key), key1 = static_cast<std::uint32_t>(key >> 32);
  std::int64_t b = 0;
  // Past 2^64 - 8 the engine's counter carries into its subsequence words: left to it.
  const std::uint64_t last_group = ~std::uint64_t{0} - 7;
  for (; b + 8 <= blocks && first_block + static_cast<std::uint64_t>(b) <= last_group; b += 8) eight_blocks(key0, key1, first_block + static_cast<std::uint64_t>(b), out + 4 * b);
  if (b < blocks) blocks_one_at_a_time(key, first_block + static_cast<std::uint64_t>(b), blocks - b, out + 4 * b);
}
#endif

}  // namespace

void philox_blocks(std::uint64_t key, std::uint64_t first_block, std::int64_t blocks, std::uint32_t* out) {
#ifdef LRB_SIMD_X86
  if (LRB_SIMD_AT_LEAST(avx2)) return blocks_avx2(key, first_block, blocks, out);
#endif
  blocks_one_at_a_time(key, first_block, blocks, out);
}

}  // namespace lrb
