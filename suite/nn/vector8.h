#pragma once
// What the CPU vector loops share: 8 floats in GCC's vector extension (one AVX register, two
// SSE registers on the baseline x86-64), their load, store and lane sum, and the attribute
// that compiles a loop twice, for AVX2 and the baseline, chosen at load time by the CPU's
// features. Nothing here multiplies and adds, so a file includes it whatever its contraction
// setting: the attention kernels contract a*b+c into one FMA (attention/vec8.h), LayerNorm's
// row loop does not (both of its copies round alike).
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LRB_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LRB_VECTOR_CLONES
#endif
#define LRB_INLINE inline __attribute__((always_inline))

// Everything with a vector in its signature is inlined into the loops, so the note that an
// AVX vector would change the ABI of a real call does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace lrb::vec8 {

typedef float V8 __attribute__((vector_size(32)));

LRB_INLINE V8 load8(const float* p) {
  V8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
LRB_INLINE void store8(float* p, const V8& v) { std::memcpy(p, &v, sizeof v); }
LRB_INLINE V8 splat(float x) { return V8{} + x; }
LRB_INLINE float lane_sum(const V8& v) {
  float s = 0;
  for (int l = 0; l < 8; ++l) s += v[l];
  return s;
}

}  // namespace lrb::vec8
