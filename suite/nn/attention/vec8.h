#pragma once
// The vector helpers of the fused CPU kernels for heads of 8 (small_head_softmax.cpp,
// blocked_small_head.cpp), of linear attention's fused passes (linear_fused.cpp) and of the
// blocked engine's row passes (softmax_rows.cpp), on the 8-float vector of suite/nn/vector8.h
// or, for a kernel written for any width W, on the W-lane vector of Lanes<W>. A kernel is
// compiled for AVX2 + FMA and for the baseline (LRB_VEC8_DISPATCH), a width-generic one also
// 16 wide for AVX-512 (LRB_VEC_WIDE_DISPATCH); the widest the processor runs is taken
// (avx512_code(), avx2_fma_code(): feature tests; GCC's target_clones("arch=...") would test
// the CPU model instead). Include only from those files: they are compiled with -O3
// -ffp-contract=fast (suite/CMakeLists.txt), so that a*b+c becomes one FMA.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "suite/nn/vector8.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define LRB_HAS_AVX2_PATH 1
#define LRB_AVX2_FMA __attribute__((target("avx2,fma")))
#define LRB_AVX512 __attribute__((target("avx512f,avx2,fma")))
#endif

// Defines `void name_any(const Args&)`: the kernel `name` (LRB_INLINE, vector code) compiled
// for AVX2 + FMA and for the baseline x86-64, the first taken where avx2_fma_code() says so.
// LRB_VEC_WIDE_DISPATCH does the same for a kernel `template <int W> name` (W lanes a
// vector), compiled 16 wide for AVX-512 as well, taken where avx512_code() says so.
#ifdef LRB_HAS_AVX2_PATH
#define LRB_VEC8_DISPATCH(name, Args)                              \
  void name##_baseline(const Args& a) { name(a); }                 \
  LRB_AVX2_FMA void name##_avx2(const Args& a) { name(a); }        \
  void name##_any(const Args& a) {                                 \
    if (::lrb::vec8::avx2_fma_code()) return name##_avx2(a);       \
    name##_baseline(a);                                            \
  }
#define LRB_VEC_WIDE_DISPATCH(name, Args)                           \
  void name##_baseline(const Args& a) { name<8>(a); }               \
  LRB_AVX2_FMA void name##_avx2(const Args& a) { name<8>(a); }      \
  LRB_AVX512 void name##_avx512(const Args& a) { name<16>(a); }     \
  void name##_any(const Args& a) {                                  \
    if (::lrb::vec8::avx512_code()) return name##_avx512(a);        \
    if (::lrb::vec8::avx2_fma_code()) return name##_avx2(a);        \
    name##_baseline(a);                                             \
  }
#else
#define LRB_VEC8_DISPATCH(name, Args) \
  void name##_any(const Args& a) { name(a); }
#define LRB_VEC_WIDE_DISPATCH(name, Args) \
  void name##_any(const Args& a) { name<8>(a); }
#endif

namespace lrb::vec8 {

typedef std::int32_t I8 __attribute__((vector_size(32)));
constexpr float kMinExponent = -87.0f;  // exp below this is under float's normal range: 0 here

// Whether the AVX2 + FMA copies run: the CPU has both and no test asked for the baseline
// (fused_softmax_use_baseline_code, small_head_softmax.h).
bool avx2_fma_code();
// Whether the 16-wide AVX-512 copies run: the CPU has AVX-512F, the AVX2 copies run, and no
// test asked for the 8-wide ones (fused_softmax_allow_avx512, small_head_softmax.h).
bool avx512_code();

// W floats in GCC's vector extension: 8 (an AVX register, two SSE ones on the baseline) or 16
// (an AVX-512 register: 1.8x the rate of 8 for the softmax's row passes on a Zen 5, rows of
// 576 scores in cache). Spelled out per width: GCC does not take a vector_size that depends
// on a template parameter.
typedef float V16 __attribute__((vector_size(64)));
typedef std::int32_t I16 __attribute__((vector_size(64)));
template <int W>
struct Lanes;
template <>
struct Lanes<8> {
  using V = V8;
  using I = I8;
};
template <>
struct Lanes<16> {
  using V = V16;
  using I = I16;
};

template <typename V>
LRB_INLINE V load_lanes(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename V>
LRB_INLINE void store_lanes(float* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}
template <typename V>
LRB_INLINE float lanes_max(const V& v) {
  float m = -__builtin_inff();
  for (std::size_t l = 0; l < sizeof(V) / sizeof(float); ++l) m = m < v[l] ? v[l] : m;
  return m;
}
template <typename V>
LRB_INLINE float lanes_sum(const V& v) {
  float t = 0;
  for (std::size_t l = 0; l < sizeof(V) / sizeof(float); ++l) t += v[l];
  return t;
}

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
template <int W>
LRB_INLINE typename Lanes<W>::V exp_lanes(const typename Lanes<W>::V& x) {
  return exp_nonpositive_of<typename Lanes<W>::V, typename Lanes<W>::I>(x);
}

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

// exp(s - m) in place over a row of nk scores (m: its maximum, or 0 for a row of -inf), W at
// a time; returns the row's sum.
template <int W = 8>
LRB_INLINE float exp_row(float* __restrict s, float m, std::int64_t nk) {
  using V = typename Lanes<W>::V;
  const std::int64_t full = nk / W * W;
  V sum{};
  for (std::int64_t j = 0; j < full; j += W) {
    const V e = exp_lanes<W>(load_lanes<V>(s + j) - m);
    store_lanes(s + j, e);
    sum += e;
  }
  float total = lanes_sum(sum);
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
