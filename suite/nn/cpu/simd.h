#pragma once
// The one vector header of the CPU fast paths (this folder): GCC's vector extension 8 floats
// wide (one AVX register, two SSE ones on the baseline x86-64) or 16 (one AVX-512 register),
// their loads, stores, lane sums and exp, and the dispatch macros that compile a kernel once
// per SIMD level and run the copy simd_level() (suite/core/simd_level.h) names. Every file
// of the folder is compiled with -O3 -ffp-contract=fast -fno-math-errno (lrb_fast_path_folder,
// suite/CMakeLists.txt), so a*b+c becomes one FMA wherever a copy's target has FMA: the
// kernels that may round so (LRB_SIMD_DISPATCH, LRB_SIMD_WIDE_DISPATCH) take AVX2 + FMA,
// those whose every copy must round as the baseline does (LRB_SIMD_EXACT_DISPATCH) take AVX2
// alone, where no instruction contracts.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "suite/core/simd_level.h"

#define LRB_INLINE inline __attribute__((always_inline))

#if defined(__x86_64__) && defined(__GNUC__)
#define LRB_SIMD_X86 1
#define LRB_TARGET_AVX2 __attribute__((target("avx2")))
#define LRB_TARGET_AVX2_FMA __attribute__((target("avx2,fma")))
#define LRB_TARGET_AVX512_FMA __attribute__((target("avx512f,avx2,fma")))
#endif

// Everything with a vector in its signature is inlined into the loops, so the note that an
// AVX vector would change the ABI of a real call does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

// LRB_SIMD_DISPATCH(name, Args) defines `void name_any(const Args&)`: the kernel `name`
// (LRB_INLINE, vector code) compiled for the baseline x86-64 and for AVX2 + FMA, the latter
// taken at avx2 and above. LRB_SIMD_WIDE_DISPATCH does the same for a kernel
// `template <int W> name` (W lanes a vector), compiled 16 wide for avx512 as well.
// LRB_SIMD_EXACT_DISPATCH(name, impl) defines `name(args...)` forwarding to the LRB_INLINE
// function (or template) `impl`, compiled for the baseline and for AVX2 without FMA: both
// copies give the same bits, the AVX2 one faster.
#ifdef LRB_SIMD_X86
#define LRB_SIMD_AT_LEAST(level) (::lrb::simd_level() >= ::lrb::SimdLevel::level)
#define LRB_SIMD_DISPATCH(name, Args)                              \
  void name##_baseline(const Args& a) { name(a); }                 \
  LRB_TARGET_AVX2_FMA void name##_avx2(const Args& a) { name(a); } \
  void name##_any(const Args& a) {                                 \
    if (LRB_SIMD_AT_LEAST(avx2)) return name##_avx2(a);            \
    name##_baseline(a);                                            \
  }
#define LRB_SIMD_WIDE_DISPATCH(name, Args)                                \
  void name##_baseline(const Args& a) { name<8>(a); }                     \
  LRB_TARGET_AVX2_FMA void name##_avx2(const Args& a) { name<8>(a); }     \
  LRB_TARGET_AVX512_FMA void name##_avx512(const Args& a) { name<16>(a); } \
  void name##_any(const Args& a) {                                        \
    if (LRB_SIMD_AT_LEAST(avx512)) return name##_avx512(a);               \
    if (LRB_SIMD_AT_LEAST(avx2)) return name##_avx2(a);                   \
    name##_baseline(a);                                                   \
  }
#define LRB_SIMD_EXACT_DISPATCH(name, impl)                  \
  template <typename... A>                                   \
  void name##_baseline(A... a) {                             \
    impl(a...);                                              \
  }                                                          \
  template <typename... A>                                   \
  LRB_TARGET_AVX2 void name##_avx2(A... a) {                 \
    impl(a...);                                              \
  }                                                          \
  template <typename... A>                                   \
  void name(A... a) {                                        \
    if (LRB_SIMD_AT_LEAST(avx2)) return name##_avx2(a...);   \
    name##_baseline(a...);                                   \
  }
#else
#define LRB_SIMD_DISPATCH(name, Args) \
  void name##_any(const Args& a) { name(a); }
#define LRB_SIMD_WIDE_DISPATCH(name, Args) \
  void name##_any(const Args& a) { name<8>(a); }
#define LRB_SIMD_EXACT_DISPATCH(name, impl) \
  template <typename... A>                  \
  void name(A... a) {                       \
    impl(a...);                             \
  }
#endif

namespace lrb::vec8 {

typedef float V8 __attribute__((vector_size(32)));
typedef std::int32_t I8 __attribute__((vector_size(32)));
constexpr float kMinExponent = -87.0f;  // exp below this is under float's normal range: 0 here

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
