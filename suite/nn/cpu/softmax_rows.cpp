#include "suite/nn/cpu/softmax_rows.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <atomic>
#include <cmath>
#include <type_traits>
#include <vector>

#include "suite/core/errors.h"
#include "suite/nn/attention/common.h"
#include "suite/nn/batched_matmul.h"
#include "suite/nn/cpu/simd.h"

namespace lrb {
namespace {

using index_t = std::int64_t;

std::atomic<bool> force_general{false};

constexpr float kInf = __builtin_inff();
// Scores per task of at::parallel_for: fewer are not worth a thread.
constexpr index_t kGrain = index_t{1} << 15;

// One row's operands; one struct for the three kernels (their dispatch takes one).
struct RowArgs {
  float* s;           // the row's n scores, rewritten in place
  const float* bias;  // its n offsets, or null
  const bool* drop;   // its n drop flags, or null
  const float* p;     // score_gradient_row: the row's probabilities
  float value;        // recompute_row: the row's lse; score_gradient_row: its delta
  float* lse;         // softmax_row: where the row's lse goes
  index_t n;
};

using vec8::I16;
using vec8::lanes_max;
using vec8::Lanes;
using vec8::load_lanes;
using vec8::store_lanes;

// Lanes whose flag of flags[0..W) is set (all bits): the W bytes as W/4 32-bit lanes, each
// spread over four lanes and masked to its own byte. A few vector instructions, where GCC
// converted a vector of bytes lane by lane (a third of the forward's row time at 8 wide).
template <int W>
LRB_INLINE typename Lanes<W>::I dropped(const bool* flags) {
  typedef std::int32_t I4 __attribute__((vector_size(16)));
  constexpr std::int32_t b0 = 0xff, b1 = 0xff00, b2 = 0xff0000, b3 = static_cast<std::int32_t>(0xff000000u);
  if constexpr (W == 8) {
    typedef long long L2 __attribute__((vector_size(16)));
    long long word;
    std::memcpy(&word, flags, sizeof word);
    const I4 pair = reinterpret_cast<I4>(L2{word, 0});  // one vmovq: no round trip through memory
    const vec8::I8 spread = __builtin_shufflevector(pair, pair, 0, 0, 0, 0, 1, 1, 1, 1);
    return (spread & vec8::I8{b0, b1, b2, b3, b0, b1, b2, b3}) != 0;
  } else {
    static_assert(W == 16);
    typedef long long L8 __attribute__((vector_size(64)));
    long long words[2];
    std::memcpy(words, flags, sizeof words);
    // The 16 bytes in the low four lanes, built in registers (a memcpy into a wider vector
    // went through the stack, and its 64-byte reload missed store forwarding).
    const I16 quad = reinterpret_cast<I16>(L8{words[0], words[1], 0, 0, 0, 0, 0, 0});
    const I16 spread = __builtin_shufflevector(quad, quad, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    return (spread & I16{b0, b1, b2, b3, b0, b1, b2, b3, b0, b1, b2, b3, b0, b1, b2, b3}) != 0;
  }
}

// The row's operands as locals the loops keep in registers (through `a` every store to the
// scores could alias them, and each iteration reloaded them).
template <int W>
struct Row {
  float* __restrict s;
  const float* __restrict bias;
  const bool* __restrict drop;
  index_t n, full;
  explicit Row(const RowArgs& a) : s(a.s), bias(a.bias), drop(a.drop), n(a.n), full(a.n / W * W) {}
};

// Scores j..j+W-1 with the bias added and -inf where dropped; Bias and Drop say which the row
// has, so that each combination is a loop of its own.
template <int W, bool Bias, bool Drop>
LRB_INLINE typename Lanes<W>::V offset_lanes(const Row<W>& r, index_t j) {
  using V = typename Lanes<W>::V;
  V x = load_lanes<V>(r.s + j);
  if constexpr (Bias) x += load_lanes<V>(r.bias + j);
  if constexpr (Drop) x = dropped<W>(r.drop + j) ? V{} - kInf : x;
  return x;
}
template <int W, bool Bias, bool Drop>
LRB_INLINE float offset1(const Row<W>& r, index_t j) {
  if (Drop && r.drop[j]) return -kInf;
  return Bias ? r.s[j] + r.bias[j] : r.s[j];
}

// Calls f(bias, drop) with the row's combination as std::true_type / std::false_type.
template <int W, typename F>
LRB_INLINE void with_offsets(const Row<W>& r, F&& f) {
  if (r.bias && r.drop) return f(std::true_type{}, std::true_type{});
  if (r.bias) return f(std::true_type{}, std::false_type{});
  if (r.drop) return f(std::false_type{}, std::true_type{});
  f(std::false_type{}, std::false_type{});
}

// Offsets, maximum, exp(s - max) and its sum, then the division: the row stays in L1 between
// its three sweeps. As LibTorch's ops do it, but the division is a multiply by 1/sum.
template <int W>
LRB_INLINE void softmax_row(const RowArgs& a) {
  using V = typename Lanes<W>::V;
  const Row<W> r(a);
  float m = -kInf;
  with_offsets(r, [&](auto bias, auto drop) {
    constexpr bool B = decltype(bias)::value, D = decltype(drop)::value;
    V mv = V{} - kInf;
    for (index_t j = 0; j < r.full; j += W) {
      const V x = offset_lanes<W, B, D>(r, j);
      if constexpr (B || D) store_lanes(r.s + j, x);
      mv = x > mv ? x : mv;
    }
    m = lanes_max(mv);
    for (index_t j = r.full; j < r.n; ++j) {
      const float x = offset1<W, B, D>(r, j);
      r.s[j] = x;
      m = m < x ? x : m;
    }
  });
  const float shift = m == -kInf ? 0.0f : m;  // a row with every key dropped: exp(-inf) = 0
  const float sum = vec8::exp_row<W>(r.s, shift, r.n);
  if (sum == 0.0f) {  // every key dropped: zeros already; +inf keeps the backward's exp at 0
    *a.lse = kInf;
    return;
  }
  const float inv = 1.0f / sum;
  for (index_t j = 0; j < r.full; j += W) store_lanes(r.s + j, load_lanes<V>(r.s + j) * inv);
  for (index_t j = r.full; j < r.n; ++j) r.s[j] *= inv;
  *a.lse = shift + std::log(sum);
}

// exp(s + bias - lse), 0 where dropped (exp(-inf)); s + bias - lse <= 0 up to rounding.
template <int W>
LRB_INLINE void recompute_row(const RowArgs& a) {
  const Row<W> r(a);
  const float lse = a.value;
  with_offsets(r, [&](auto bias, auto drop) {
    constexpr bool B = decltype(bias)::value, D = decltype(drop)::value;
    for (index_t j = 0; j < r.full; j += W) store_lanes(r.s + j, vec8::exp_lanes<W>(offset_lanes<W, B, D>(r, j) - lse));
    for (index_t j = r.full; j < r.n; ++j) r.s[j] = vec8::exp_nonpositive(offset1<W, B, D>(r, j) - lse);
  });
}

template <int W>
LRB_INLINE void score_gradient_row(const RowArgs& a) {
  using V = typename Lanes<W>::V;
  const Row<W> r(a);
  const float* __restrict p = a.p;
  const float delta = a.value;
  for (index_t j = 0; j < r.full; j += W)
    store_lanes(r.s + j, (load_lanes<V>(r.s + j) - delta) * load_lanes<V>(p + j));
  for (index_t j = r.full; j < r.n; ++j) r.s[j] = (r.s[j] - delta) * p[j];
}

// Each row kernel compiled 16 wide for AVX-512, 8 wide for AVX2 + FMA and for the baseline.
LRB_SIMD_WIDE_DISPATCH(softmax_row, RowArgs)
LRB_SIMD_WIDE_DISPATCH(recompute_row, RowArgs)
LRB_SIMD_WIDE_DISPATCH(score_gradient_row, RowArgs)

// Where each row of `shape` [..., n] starts in a tensor broadcast to it (its element offset
// from data_ptr), from the strides of its leading dimensions (0 where broadcast).
class RowStarts {
 public:
  RowStarts(const at::Tensor& t, at::IntArrayRef shape) {
    const at::Tensor x = t.expand(shape);
    for (index_t d = 0; d + 1 < x.dim(); ++d) {
      sizes_.push_back(x.size(d));
      strides_.push_back(x.stride(d));
    }
  }
  index_t operator()(index_t row) const {
    index_t at = 0;
    for (std::size_t d = sizes_.size(); d-- > 0;) {
      at += row % sizes_[d] * strides_[d];
      row /= sizes_[d];
    }
    return at;
  }

 private:
  std::vector<index_t> sizes_, strides_;
};

// A bias or drop operand as `type` with its keys contiguous (a broadcast over the keys or a
// strided key dimension is copied at its own size, never at the scores').
at::Tensor keys_contiguous(const at::Tensor& t, const at::Tensor& s, at::ScalarType type) {
  LRB_CHECK(!t.defined() || t.dim() <= s.dim(), "softmax rows: an offset operand has more dimensions than the scores");
  return with_contiguous_keys(t, s.size(-1), type);
}

// The row kernel `kernel` over every row of s, rows in parallel; `fill(args, row)` sets the
// row's operands beyond its scores.
template <typename Kernel, typename Fill>
void for_each_row(const at::Tensor& s, Kernel kernel, Fill fill) {
  const index_t n = s.size(-1);
  if (n == 0 || s.numel() == 0) return;
  float* const base = s.data_ptr<float>();
  at::parallel_for(0, s.numel() / n, kGrain / n + 1, [&](index_t begin, index_t end) {
    for (index_t r = begin; r < end; ++r) {
      RowArgs a{base + r * n, nullptr, nullptr, nullptr, 0.0f, nullptr, n};
      fill(a, r);
      kernel(a);
    }
  });
}

// The bias and drop rows of each score row.
struct Offsets {
  Offsets(const at::Tensor& s, const at::Tensor& bias_in, const at::Tensor& drop_in)
      : bias(keys_contiguous(bias_in, s, at::kFloat)), drop(keys_contiguous(drop_in, s, at::kBool)),
        bias_at(bias.defined() ? RowStarts(bias, s.sizes()) : RowStarts(s, s.sizes())),
        drop_at(drop.defined() ? RowStarts(drop, s.sizes()) : RowStarts(s, s.sizes())),
        bias_data(bias.defined() ? bias.data_ptr<float>() : nullptr),
        drop_data(drop.defined() ? drop.data_ptr<bool>() : nullptr) {}
  void set(RowArgs& a, index_t row) const {
    if (bias_data) a.bias = bias_data + bias_at(row);
    if (drop_data) a.drop = drop_data + drop_at(row);
  }
  at::Tensor bias, drop;
  RowStarts bias_at, drop_at;
  const float* bias_data;
  const bool* drop_data;
};

void check_row_values(const at::Tensor& s, const at::Tensor& values, const char* what) {
  LRB_CHECK(softmax_rows_fused_applies(s), std::string("softmax rows: scores outside the fused path (") + what + ")");
  LRB_CHECK(values.defined() && values.scalar_type() == at::kFloat && values.device().is_cpu() &&
                values.dim() == s.dim() && values.size(-1) == 1 &&
                values.sizes().slice(0, s.dim() - 1).equals(s.sizes().slice(0, s.dim() - 1)),
            std::string("softmax rows: ") + what + " must be float32 [..., 1] beside the scores");
}

}  // namespace

bool softmax_rows_fused_applies(const at::Tensor& s) {
  if (force_general.load(std::memory_order_relaxed) || cpu_autocast_active()) return false;
  // Writing through raw pointers, the passes would hide their work from a graph being recorded
  // (a backward run with create_graph): LibTorch's ops record it.
  if (!s.defined() || (at::GradMode::is_enabled() && s.requires_grad())) return false;
  return s.device().is_cpu() && s.layout() == at::kStrided && s.scalar_type() == at::kFloat && s.dim() >= 1 &&
         s.is_contiguous() && !s.is_neg() && !s.is_conj();
}

void softmax_rows_forward(at::Tensor& s, const at::Tensor& bias, const at::Tensor& drop, at::Tensor& lse) {
  check_row_values(s, lse, "lse");
  const Offsets offsets(s, bias, drop);
  const RowStarts lse_at(lse, lse.sizes());
  float* const out = lse.data_ptr<float>();
  for_each_row(s, softmax_row_any, [&](RowArgs& a, index_t r) {
    offsets.set(a, r);
    a.lse = out + lse_at(r);
  });
}

void softmax_rows_recompute(at::Tensor& s, const at::Tensor& bias, const at::Tensor& drop, const at::Tensor& lse) {
  check_row_values(s, lse, "lse");
  const Offsets offsets(s, bias, drop);
  const RowStarts lse_at(lse, lse.sizes());
  const float* const in = lse.data_ptr<float>();
  for_each_row(s, recompute_row_any, [&](RowArgs& a, index_t r) {
    offsets.set(a, r);
    a.value = in[lse_at(r)];
  });
}

void softmax_rows_score_gradient(at::Tensor& ds, const at::Tensor& p, const at::Tensor& delta) {
  check_row_values(ds, delta, "delta");
  LRB_CHECK(softmax_rows_fused_applies(p) && p.sizes().equals(ds.sizes()),
            "softmax rows: the probabilities must be contiguous float32 shaped like the gradient");
  const RowStarts delta_at(delta, delta.sizes());
  const float* const d = delta.data_ptr<float>();
  const float* const probabilities = p.data_ptr<float>();
  const index_t n = ds.size(-1);
  for_each_row(ds, score_gradient_row_any, [&](RowArgs& a, index_t r) {
    a.p = probabilities + r * n;
    a.value = d[delta_at(r)];
  });
}

bool softmax_rows_use_general_path(bool general) { return force_general.exchange(general); }


}  // namespace lrb
