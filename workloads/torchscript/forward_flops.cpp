// LibTorch is built with NDEBUG and RecordFunction has a member only without it: this file
// must see the library's layout, or inputs() reads the wrong bytes (lrbench builds keep
// assert() on: CMakeLists.txt).
#ifndef NDEBUG
#define NDEBUG
#endif
#include "workloads/torchscript/forward_flops.h"

#include <ATen/record_function.h>

#include <cstring>
#include <vector>

namespace lrb {
namespace {

thread_local double counted_flops = 0;

std::vector<std::int64_t> shape_of(const c10::IValue& v) {
  if (!v.isTensor()) return {};
  const auto sizes = v.toTensor().sizes();
  return {sizes.begin(), sizes.end()};
}

double product(const std::vector<std::int64_t>& v, std::size_t from = 0) {
  double p = 1;
  for (std::size_t i = from; i < v.size(); ++i) p *= static_cast<double>(v[i]);
  return p;
}

// a [..., m, k] x b [..., k, n] with the same leading (batch) sizes: 2 * batch * m * k * n.
double product_flops(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  if (a.size() < 2 || b.size() != a.size()) return 0;
  return 2.0 * product(a) * static_cast<double>(b.back());
}

// aten::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
double convolution_flops(c10::ArrayRef<const c10::IValue> in) {
  if (in.size() < 9) return 0;
  const auto x = shape_of(in[0]), w = shape_of(in[1]);
  if (x.size() < 3 || w.size() != x.size() || !in[6].isBool()) return 0;
  const bool transposed = in[6].toBool();
  const double kernel = product(w, 2), batch = static_cast<double>(x[0]);
  // Every output (non-transposed) or input (transposed) position of every channel pair in
  // a group: weight [out, in / groups, k...] or [in, out / groups, k...].
  if (transposed) return 2.0 * batch * static_cast<double>(w[0] * w[1]) * kernel * product(x, 2);
  const auto stride = in[3].toIntVector(), padding = in[4].toIntVector(), dilation = in[5].toIntVector();
  double positions = 1;
  for (std::size_t d = 2; d < x.size(); ++d) {
    const std::size_t i = d - 2;
    const auto at = [&](const std::vector<std::int64_t>& v) { return v.empty() ? 1 : v[std::min(i, v.size() - 1)]; };
    const std::int64_t s = at(stride), p = padding.empty() ? 0 : at(padding), dl = at(dilation);
    positions *= static_cast<double>((x[d] + 2 * p - dl * (w[d] - 1) - 1) / s + 1);
  }
  return 2.0 * batch * static_cast<double>(w[0] * w[1]) * kernel * positions;
}

// query [B, H, L, E], key [B, H, S, E], value [B, H, S, Ev]: scores and weighted values.
double attention_flops(c10::ArrayRef<const c10::IValue> in) {
  if (in.size() < 3) return 0;
  const auto q = shape_of(in[0]), k = shape_of(in[1]), v = shape_of(in[2]);
  if (q.size() < 2 || k.size() != q.size() || v.size() != q.size()) return 0;
  const double rows = product(q) / static_cast<double>(q.back()), keys = static_cast<double>(k[k.size() - 2]);
  return 2.0 * rows * keys * static_cast<double>(q.back() + v.back());
}

bool counted_operator(const char* name) {
  for (const char* n : {"aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm", "aten::mv", "aten::dot", "aten::addmv",
                        "aten::convolution", "aten::_scaled_dot_product_flash_attention",
                        "aten::_scaled_dot_product_flash_attention_for_cpu", "aten::_scaled_dot_product_efficient_attention",
                        "aten::_scaled_dot_product_cudnn_attention"})
    if (std::strcmp(name, n) == 0) return true;
  return false;
}

double flops_of(const char* name, c10::ArrayRef<const c10::IValue> in) {
  const auto is = [&](const char* n) { return std::strcmp(name, n) == 0; };
  if (is("aten::mm") || is("aten::bmm")) return in.size() >= 2 ? product_flops(shape_of(in[0]), shape_of(in[1])) : 0;
  if (is("aten::addmm") || is("aten::baddbmm")) return in.size() >= 3 ? product_flops(shape_of(in[1]), shape_of(in[2])) : 0;
  if (is("aten::mv") || is("aten::dot")) return in.empty() ? 0 : 2.0 * product(shape_of(in[0]));
  if (is("aten::addmv")) return in.size() >= 2 ? 2.0 * product(shape_of(in[1])) : 0;
  if (is("aten::convolution")) return convolution_flops(in);
  return attention_flops(in);  // the fused attentions
}

std::unique_ptr<at::ObserverContext> count_operator(const at::RecordFunction& fn) {
  if (!counted_operator(fn.name())) return nullptr;
  // Only an operator called through the dispatcher's front door has its inputs recorded;
  // one redispatched from inside another has none, and asking is an error (the products
  // are called through the front door).
  try {
    counted_flops += flops_of(fn.name(), fn.inputs());
  } catch (const c10::Error&) {
  }
  return nullptr;
}

}  // namespace

MatmulFlopCounter::MatmulFlopCounter() {
  counted_flops = 0;
  handle_ = at::addThreadLocalCallback(
      at::RecordFunctionCallback(count_operator).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
}

MatmulFlopCounter::~MatmulFlopCounter() { at::removeCallback(handle_); }

double MatmulFlopCounter::flops() const { return counted_flops; }

}  // namespace lrb
