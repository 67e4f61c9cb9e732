#pragma once
// The vector helpers of the fused CPU kernels for heads of 8 (small_head_softmax.cpp,
// blocked_small_head.cpp), of linear attention's fused passes (linear_fused.cpp) and of the
// blocked engine's row passes (softmax_rows.cpp, which also compiles them 16 wide), on the
// 8-float vector of suite/nn/vector8.h. Each kernel is compiled twice, for AVX2 + FMA and for
// the baseline (LRB_VEC8_DISPATCH), and the first is taken where avx2_fma_code() says so (a
// feature test: GCC's target_clones("arch=...") would test the CPU model instead). Include only from those files: they are compiled with -O3
// -ffp-contract=fast (suite/CMakeLists.txt), so that a*b+c becomes one FMA.
#include <cstdint>
#include <cstring>

#include "suite/nn/vector8.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define LRB_HAS_AVX2_PATH 1
#define LRB_AVX2_FMA __attribute__((target("avx2,fma")))
#endif

// Defines `void name_any(const Args&)`: the kernel `name` (LRB_INLINE, vector code) compiled
// for AVX2 + FMA and for the baseline x86-64, the first taken where avx2_fma_code() says so.
#ifdef LRB_HAS_AVX2_PATH
#define LRB_VEC8_DISPATCH(name, Args)                              \
  void name##_baseline(const Args& a) { name(a); }                 \
  LRB_AVX2_FMA void name##_avx2(const Args& a) { name(a); }        \
  void name##_any(const Args& a) {                                 \
    if (::lrb::vec8::avx2_fma_code()) return name##_avx2(a);       \
    name##_baseline(a);                                            \
  }
#else
#define LRB_VEC8_DISPATCH(name, Args) \
  void name##_any(const Args& a) { name(a); }
#endif

namespace lrb::vec8 {

typedef std::int32_t I8 __attribute__((vector_size(32)));
constexpr float kMinExponent = -87.0f;  // exp below this is under float's normal range: 0 here

// Whether the AVX2 + FMA copies run: the CPU has both and no test asked for the baseline
// (fused_softmax_use_baseline_code, small_head_softmax.h).
bool avx2_fma_code();

// exp(r), r = x - n ln2 (ln2 in two parts, so r keeps its low bits): the polynomial both
// exp_nonpositive below share, for a vector (V8) or one float alike.
template <typename T>
LRB_INLINE T exp_of_remainder(const T& x, const T& n) {
  const T r = x - n * 0.693359375f + n * 2.12194440e-4f;
  T y = T{} + 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  return y * r * r + r + 1.0f;
}

// exp(x) for x <= 0 (a score minus its row's maximum) or -inf (a dropped key), exactly 0
// below kMinExponent; also right for small x > 0 (|x| < ln2/2, rounding). Cephes' expf:
// x = n ln2 + r with |r| <= ln2/2, a degree-6 polynomial in r (relative error ~1e-7),
// times 2^n built in the exponent bits.
// For any width: V a float vector, I the int32 vector of as many lanes (softmax_rows.cpp takes
// it 16 wide where the processor has AVX-512).
template <typename V, typename I>
LRB_INLINE V exp_nonpositive_of(const V& x) {
  const V xc = x < kMinExponent ? V{} + kMinExponent : x;
  const I ni = __builtin_convertvector(xc * 1.44269504088896341f - 0.5f, I);  // nearest, x <= 0
  const V y = exp_of_remainder(xc, __builtin_convertvector(ni, V));
  const I bits = (ni + 127) << 23;  // n >= -126: a normal 2^n
  V scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return x < kMinExponent ? V{} : y * scale;
}
LRB_INLINE V8 exp_nonpositive(const V8& x) { return exp_nonpositive_of<V8, I8>(x); }

// The same operations on one float, lane for lane (a row's tail). Not through the vector
// version: storing one float and loading eight defeats store forwarding, which cost the
// full softmax's forward about a fifth of its time at 197 keys.
LRB_INLINE float exp_nonpositive(float x) {
  if (!(x >= kMinExponent)) return x < kMinExponent ? 0.0f : x;  // NaN stays NaN
  const std::int32_t ni = static_cast<std::int32_t>(x * 1.44269504088896341f - 0.5f);
  const float y = exp_of_remainder(x, static_cast<float>(ni));
  const std::uint32_t bits = static_cast<std::uint32_t>(ni + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return y * scale;
}

// The largest of a row's nk scores (-inf when every one is -inf), 8 at a time.
LRB_INLINE float row_max(const float* __restrict s, std::int64_t nk) {
  const std::int64_t full = nk / 8 * 8;
  V8 mv = splat(-__builtin_inff());
  for (std::int64_t j = 0; j < full; j += 8) {
    const V8 x = load8(s + j);
    mv = x > mv ? x : mv;
  }
  float m = -__builtin_inff();
  for (int l = 0; l < 8; ++l) m = m < mv[l] ? mv[l] : m;
  for (std::int64_t j = full; j < nk; ++j) m = m < s[j] ? s[j] : m;
  return m;
}

// exp(s - m) in place over a row of nk scores (m: its maximum, or 0 for a row of -inf);
// returns the row's sum.
LRB_INLINE float exp_row(float* __restrict s, float m, std::int64_t nk) {
  const std::int64_t full = nk / 8 * 8;
  V8 sum = {};
  for (std::int64_t j = 0; j < full; j += 8) {
    const V8 e = exp_nonpositive(load8(s + j) - m);
    store8(s + j, e);
    sum += e;
  }
  float total = lane_sum(sum);
  for (std::int64_t j = full; j < nk; ++j) total += (s[j] = exp_nonpositive(s[j] - m));
  return total;
}

// The last step of the backward of R query rows, one pass over their nk keys (rows of 8,
// contiguous): dk_j += sum_r ds_r[j] q_r and dv_j += sum_r p_r[j] g_r; dq_r = sum_j ds_r[j]
// k_j (before its scale). R rows share each load and store of k, dk and dv.
template <int R>
LRB_INLINE void accumulate_key_gradients(float* const* ds, const float* const* p, const float* __restrict k_rows,
                                         const V8* q, const V8* g, std::int64_t nk, float* __restrict dk,
                                         float* __restrict dv, V8* dq) {
  for (int r = 0; r < R; ++r) dq[r] = V8{};
  for (std::int64_t j = 0; j < nk; ++j) {
    const std::int64_t at = j * 8;
    const V8 k = load8(k_rows + at);
    V8 dkj = load8(dk + at), dvj = load8(dv + at);
    for (int r = 0; r < R; ++r) {
      dq[r] += ds[r][j] * k;
      dkj += ds[r][j] * q[r];
      dvj += p[r][j] * g[r];
    }
    store8(dk + at, dkj);
    store8(dv + at, dvj);
  }
}

}  // namespace lrb::vec8
