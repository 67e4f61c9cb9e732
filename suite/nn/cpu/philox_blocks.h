#pragma once
// LibTorch's Philox4x32-10 (ATen/core/PhiloxRNGEngine.h), many blocks at once. Dropout's mask
// takes one 32-bit draw per element, and drawing them one block at a time through
// at::philox_engine cost ~3 ns an element (its rounds are scalar 32-bit products); on a CPU
// at the avx2 SIMD level (suite/core/simd_level.h), eight blocks go through the rounds
// together in vector registers; at the baseline, one block at a time.
#include <cstdint>

namespace lrb {

// out[4 b + w] = word w of block first_block + b (b < blocks): exactly the 4 * blocks values
// that at::philox_engine(key, /*subsequence=*/0, /*offset=*/first_block) returns one after
// another, on every CPU.
void philox_blocks(std::uint64_t key, std::uint64_t first_block, std::int64_t blocks, std::uint32_t* out);

}  // namespace lrb
