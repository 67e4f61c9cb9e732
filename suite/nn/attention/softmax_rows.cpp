#include "suite/nn/attention/softmax_rows.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <atomic>
#include <cmath>
#include <type_traits>
#include <vector>

#include "suite/core/errors.h"
#include "suite/nn/attention/vec8.h"
#include "suite/nn/batched_matmul.h"

namespace lrb {
namespace {

using index_t = std::int64_t;
using vec8::V8;

std::atomic<bool> force_general{false};

constexpr float kInf = __builtin_inff();
// Scores per task of at::parallel_for: fewer are not worth a thread.
constexpr index_t kGrain = index_t{1} << 15;

// One row's operands; one struct for the three kernels (LRB_VEC8_DISPATCH takes one).
struct RowArgs {
  float* s;           // the row's n scores, rewritten in place
  const float* bias;  // its n offsets, or null
  const bool* drop;   // its n drop flags, or null
  const float* p;     // score_gradient_row: the row's probabilities
  float value;        // recompute_row: the row's lse; score_gradient_row: its delta
  float* lse;         // softmax_row: where the row's lse goes
  index_t n;
};

typedef std::int32_t I4 __attribute__((vector_size(16)));

// Lanes whose flag of flags[0..8) is set (all bits): the 8 bytes as two 32-bit lanes, each
// spread over four lanes and masked to its own byte. A few vector instructions, where
// converting an 8-byte vector lane by lane took GCC a third of the forward's row time.
LRB_INLINE vec8::I8 dropped8(const bool* flags) {
  typedef long long L2 __attribute__((vector_size(16)));
  long long word;
  std::memcpy(&word, flags, sizeof word);
  const I4 pair = reinterpret_cast<I4>(L2{word, 0});  // one vmovq: no round trip through memory
  const vec8::I8 spread = __builtin_shufflevector(pair, pair, 0, 0, 0, 0, 1, 1, 1, 1);
  const vec8::I8 byte = {0xff, 0xff00, 0xff0000, static_cast<std::int32_t>(0xff000000u),
                         0xff, 0xff00, 0xff0000, static_cast<std::int32_t>(0xff000000u)};
  return (spread & byte) != 0;
}

// The row's operands as locals the loops keep in registers (through `a` every store to the
// scores could alias them, and each iteration reloaded them).
struct Row {
  float* __restrict s;
  const float* __restrict bias;
  const bool* __restrict drop;
  index_t n, full;
  explicit Row(const RowArgs& a) : s(a.s), bias(a.bias), drop(a.drop), n(a.n), full(a.n / 8 * 8) {}
};

// Scores j..j+7 with the bias added and -inf where dropped; Bias and Drop say which the row
// has, so that each combination is a loop of its own.
template <bool Bias, bool Drop>
LRB_INLINE V8 offset8(const Row& r, index_t j) {
  V8 x = vec8::load8(r.s + j);
  if constexpr (Bias) x += vec8::load8(r.bias + j);
  if constexpr (Drop) x = dropped8(r.drop + j) ? vec8::splat(-kInf) : x;
  return x;
}
template <bool Bias, bool Drop>
LRB_INLINE float offset1(const Row& r, index_t j) {
  if (Drop && r.drop[j]) return -kInf;
  return Bias ? r.s[j] + r.bias[j] : r.s[j];
}

// Calls f.template operator()<Bias, Drop>() for the row's combination.
template <typename F>
LRB_INLINE void with_offsets(const Row& r, F&& f) {
  if (r.bias && r.drop) return f(std::true_type{}, std::true_type{});
  if (r.bias) return f(std::true_type{}, std::false_type{});
  if (r.drop) return f(std::false_type{}, std::true_type{});
  f(std::false_type{}, std::false_type{});
}

// Offsets, maximum, exp(s - max) and its sum, then the division: the row stays in L1 between
// its three sweeps. As LibTorch's ops do it, but the division is a multiply by 1/sum.
LRB_INLINE void softmax_row(const RowArgs& a) {
  const Row r(a);
  float m = -kInf;
  with_offsets(r, [&](auto bias, auto drop) {
    constexpr bool B = decltype(bias)::value, D = decltype(drop)::value;
    V8 mv = vec8::splat(-kInf);
    for (index_t j = 0; j < r.full; j += 8) {
      const V8 x = offset8<B, D>(r, j);
      if constexpr (B || D) vec8::store8(r.s + j, x);
      mv = x > mv ? x : mv;
    }
    for (int l = 0; l < 8; ++l) m = m < mv[l] ? mv[l] : m;
    for (index_t j = r.full; j < r.n; ++j) {
      const float x = offset1<B, D>(r, j);
      r.s[j] = x;
      m = m < x ? x : m;
    }
  });
  const float shift = m == -kInf ? 0.0f : m;  // a row with every key dropped: exp(-inf) = 0
  const float sum = vec8::exp_row(r.s, shift, r.n);
  if (sum == 0.0f) {  // every key dropped: zeros already; +inf keeps the backward's exp at 0
    *a.lse = kInf;
    return;
  }
  const float inv = 1.0f / sum;
  for (index_t j = 0; j < r.full; j += 8) vec8::store8(r.s + j, vec8::load8(r.s + j) * inv);
  for (index_t j = r.full; j < r.n; ++j) r.s[j] *= inv;
  *a.lse = shift + std::log(sum);
}
LRB_VEC8_DISPATCH(softmax_row, RowArgs)

// exp(s + bias - lse), 0 where dropped (exp(-inf)); s + bias - lse <= 0 up to rounding.
LRB_INLINE void recompute_row(const RowArgs& a) {
  const Row r(a);
  const float lse = a.value;
  with_offsets(r, [&](auto bias, auto drop) {
    constexpr bool B = decltype(bias)::value, D = decltype(drop)::value;
    for (index_t j = 0; j < r.full; j += 8)
      vec8::store8(r.s + j, vec8::exp_nonpositive(offset8<B, D>(r, j) - lse));
    for (index_t j = r.full; j < r.n; ++j) r.s[j] = vec8::exp_nonpositive(offset1<B, D>(r, j) - lse);
  });
}
LRB_VEC8_DISPATCH(recompute_row, RowArgs)

LRB_INLINE void score_gradient_row(const RowArgs& a) {
  const Row r(a);
  const float* __restrict p = a.p;
  const float delta = a.value;
  for (index_t j = 0; j < r.full; j += 8) vec8::store8(r.s + j, (vec8::load8(r.s + j) - delta) * vec8::load8(p + j));
  for (index_t j = r.full; j < r.n; ++j) r.s[j] = (r.s[j] - delta) * p[j];
}
LRB_VEC8_DISPATCH(score_gradient_row, RowArgs)

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
  if (!t.defined()) return t;
  at::Tensor x = t.to(type);
  if (x.dim() == 0) x = x.view({1});
  LRB_CHECK(x.dim() <= s.dim(), "softmax rows: an offset operand has more dimensions than the scores");
  if (x.stride(-1) != 1 || x.size(-1) != s.size(-1)) {
    std::vector<index_t> sizes = x.sizes().vec();
    sizes.back() = s.size(-1);
    x = x.expand(sizes).contiguous();
  }
  return x;
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
