#include "suite/nn/attention/kernel_registry.h"

#include <ATen/ATen.h>

#include "suite/core/errors.h"
#include "suite/nn/attention/block_sparse.h"
#include "suite/nn/attention/linear.h"
#include "suite/nn/attention/pooling.h"
#include "suite/nn/attention/proportional.h"
#include "suite/nn/attention/retention.h"
#include "suite/nn/attention/sliding_window.h"
#include "suite/nn/attention/tala.h"
#include "suite/nn/attention/softmax.h"

namespace lrb {
namespace {

OptionSpec int_opt(std::string name, std::int64_t def, std::string help, std::optional<double> min = 0) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::Int;
  s.default_value = def;
  s.help = std::move(help);
  s.min = min;
  return s;
}
OptionSpec float_opt(std::string name, double def, std::string help, std::optional<double> min = 0) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::Float;
  s.default_value = def;
  s.help = std::move(help);
  s.min = min;
  return s;
}
OptionSpec bool_opt(std::string name, bool def, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::Bool;
  s.default_value = def;
  s.help = std::move(help);
  return s;
}
OptionSpec string_opt(std::string name, std::string def, std::vector<std::string> choices, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::String;
  s.default_value = std::move(def);
  s.choices = std::move(choices);
  s.help = std::move(help);
  return s;
}
OptionSpec int_list_opt(std::string name, std::vector<std::int64_t> def, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::IntList;
  s.default_value = def;
  s.help = std::move(help);
  s.min = 0;
  s.axis = false;
  return s;
}

OptionSpec scale_opt() { return float_opt("scale", 0.0, "logit scale; 0 means 1/sqrt(d)"); }

std::vector<std::int64_t> int_list(const json& j) { return j.get<std::vector<std::int64_t>>(); }

void reject(const AttentionTensors& in, const std::string& kernel, bool mask, bool global, bool sizes) {
  if (!mask && in.mask.defined()) throw UserError(kernel + " takes no padding mask");
  if (!global && in.global.defined()) throw UserError(kernel + " takes no global tokens (only sliding_window does)");
  if (!sizes && in.sizes.defined()) throw UserError(kernel + " takes no token sizes (only proportional does)");
}

std::vector<AttentionKernel> build() {
  std::vector<AttentionKernel> all;

  all.push_back({"softmax", "full softmax attention (the reference); chunk > 0: query-chunked, O(N*chunk) memory",
                 {{scale_opt(), int_opt("chunk", 0, "queries per chunk; 0 computes all N x N scores at once")}},
                 {"mask"},
                 [](const json& o, const AttentionTensors& in) {
                   reject(in, "softmax", true, false, false);
                   const std::int64_t chunk = o.at("chunk").get<std::int64_t>();
                   const double scale = o.at("scale").get<double>();
                   AttentionRun r;
                   const std::int64_t B = in.q.size(0), H = in.q.size(1), Nq = in.q.size(2), Nk = in.k.size(2);
                   if (chunk > 0) {
                     r.out = chunked_softmax_attention(in.q, in.k, in.v, in.mask, chunk, scale);
                     r.score_elements = chunked_softmax_score_elements(B, H, Nq, Nk, chunk);
                   } else {
                     r.out = softmax_attention(in.q, in.k, in.v, in.mask, scale);
                     r.score_elements = softmax_score_elements(B, H, Nq, Nk);
                   }
                   return r;
                 }});

  all.push_back({"linear", "kernel (linear) attention: psi(q) (psi(K)^T V) / norm; no N x N tensor",
                 {{string_opt("feature_map", "elu+1", {"elu+1", "relu", "softplus"}, "non-negative feature map psi"),
                   string_opt("normalization", "row", {"row", "output", "row-input"},
                              "row: Katharopoulos et al.'s row normaliser Z' (+eps), no tau; output: divide by "
                              "tau, no Z' (not an average of v); row-input: Z' with psi(q/sqrt(tau)), "
                              "psi(k/sqrt(tau)) (tau as a temperature)"),
                   float_opt("tau", 0.0, "tau of output and row-input; 0 means sqrt(real keys)"),
                   float_opt("eps", 1e-6, "epsilon added to the row normaliser Z'")}},
                 {"mask"},
                 [](const json& o, const AttentionTensors& in) {
                   reject(in, "linear", true, false, false);
                   LinearAttentionOptions lo;
                   lo.feature_map = parse_feature_map(o.at("feature_map").get<std::string>());
                   lo.normalization = parse_linear_normalization(o.at("normalization").get<std::string>());
                   lo.tau = o.at("tau").get<double>();
                   lo.eps = o.at("eps").get<double>();
                   AttentionRun r;
                   r.out = linear_attention(in.q, in.k, in.v, lo, in.mask);
                   r.score_elements = linear_score_elements();
                   return r;
                 }});

  all.push_back({"sliding_window", "Longformer sliding window (w keys each side) with optional global tokens",
                 {{int_opt("window", 256, "w: keys attended on each side (Longformer: 256)"),
                   int_opt("block", 0, "query block size; 0 picks min(64, w+1)"), scale_opt()}},
                 {"mask", "global"},
                 [](const json& o, const AttentionTensors& in) {
                   reject(in, "sliding_window", true, true, false);
                   SlidingWindowOptions so;
                   so.window = o.at("window").get<std::int64_t>();
                   so.block = o.at("block").get<std::int64_t>();
                   so.scale = o.at("scale").get<double>();
                   AttentionRun r;
                   r.out = sliding_window_attention(in.q, in.k, in.v, so, in.mask, in.global);
                   std::int64_t g = 0;
                   if (in.global.defined() && in.global.numel() > 0)
                     g = in.global.scalar_type() == at::kBool ? in.global[0].sum().item<std::int64_t>()
                                                               : in.global.size(in.global.dim() - 1);
                   r.score_elements =
                       sliding_window_score_elements(in.q.size(0), in.q.size(1), in.q.size(2), so, g);
                   return r;
                 }});

  all.push_back({"block_sparse",
                 "BigBird ITC block-sparse attention (window, global, random blocks); dense when N <= (5+2r)*b",
                 {{int_opt("block", 64, "block size b (BigBird: 64)", 1),
                   int_opt("random_blocks", 3, "random key blocks r per query block (BigBird: 3)"),
                   int_opt("seed", 0, "seed of the random block table"), scale_opt()}},
                 {"mask"},
                 [](const json& o, const AttentionTensors& in) {
                   reject(in, "block_sparse", true, false, false);
                   BlockSparseOptions bo;
                   bo.block = o.at("block").get<std::int64_t>();
                   bo.random_blocks = o.at("random_blocks").get<std::int64_t>();
                   bo.seed = static_cast<std::uint64_t>(o.at("seed").get<std::int64_t>());
                   bo.scale = o.at("scale").get<double>();
                   auto res = block_sparse_attention(in.q, in.k, in.v, bo, in.mask);
                   AttentionRun r;
                   r.out = res.out;
                   r.records["random_blocks"] = res.random_blocks;
                   r.info["dense_fallback"] = res.dense_fallback;
                   r.score_elements = block_sparse_score_elements(in.q.size(0), in.q.size(1), in.q.size(2), bo);
                   return r;
                 }});

  all.push_back({"pooling",
                 "MViT pooling attention (pooled q, k, v; v2 relative position and residual pooling; padded keys masked)",
                 {{string_opt("mode", "conv", {"conv", "max", "avg"}, "pooling: depthwise conv + LayerNorm, max or avg"),
                   int_list_opt("grid", {}, "token grid [T] or [H, W]; empty: a 1-D grid of N tokens"),
                   int_list_opt("kernel", {3}, "pooling kernel per axis (one value: every axis)"),
                   int_list_opt("kernel_q", {}, "q's pooling kernel per axis; empty: kernel (1 with stride_q 1: q not pooled, as MViT v1's unstrided blocks)"),
                   int_list_opt("stride_q", {1}, "q stride per axis (downsamples the output)"),
                   int_list_opt("stride_kv", {1}, "k and v stride per axis (cheaper attention)"),
                   bool_opt("rel_pos", true, "MViT v2 decomposed relative position"),
                   bool_opt("residual_pooling", true, "MViT v2 residual pooling connection (+ pooled q)"),
                   bool_opt("cls_token", false, "the first token is a class token (not pooled)"),
                   int_opt("seed", 0, "initialisation of the pooling and relative-position parameters"),
                   scale_opt()}},
                 {"mask"},
                 [](const json& o, const AttentionTensors& in) {
                   reject(in, "pooling", true, false, false);
                   PoolingAttentionOptions po;
                   po.heads = in.q.size(1);
                   po.head_dim = in.q.size(3);
                   po.mode = parse_pool_mode(o.at("mode").get<std::string>());
                   po.cls_token = o.at("cls_token").get<bool>();
                   po.grid = int_list(o.at("grid"));
                   if (po.grid.empty()) po.grid = {in.q.size(2) - (po.cls_token ? 1 : 0)};
                   po.kernel = int_list(o.at("kernel"));
                   po.kernel_q = int_list(o.at("kernel_q"));
                   po.stride_q = int_list(o.at("stride_q"));
                   po.stride_kv = int_list(o.at("stride_kv"));
                   po.rel_pos = o.at("rel_pos").get<bool>();
                   po.residual_pooling = o.at("residual_pooling").get<bool>();
                   po.seed = static_cast<std::uint64_t>(o.at("seed").get<std::int64_t>());
                   po.scale = o.at("scale").get<double>();
                   PoolingAttention module(po);
                   module.to(in.q.device(), in.q.scalar_type());
                   auto res = module.forward(in.q, in.k, in.v, in.mask);
                   AttentionRun r;
                   r.out = res.out;
                   r.info["grid"] = res.grid;
                   r.score_elements = module.score_elements(in.q.size(0));
                   return r;
                 }});

  all.push_back({"proportional", "ToMe proportional attention: softmax with log(token size) added to key logits",
                 {{int_opt("chunk", 0, "queries per chunk; 0 computes all scores at once"), scale_opt()}},
                 {"mask", "sizes"},
                 [](const json& o, const AttentionTensors& in) {
                   reject(in, "proportional", true, false, true);
                   const std::int64_t chunk = o.at("chunk").get<std::int64_t>();
                   AttentionRun r;
                   r.out = proportional_attention(in.q, in.k, in.v, in.sizes, in.mask, chunk, o.at("scale").get<double>());
                   const std::int64_t B = in.q.size(0), H = in.q.size(1), Nq = in.q.size(2), Nk = in.k.size(2);
                   r.score_elements = chunk > 0 ? chunked_softmax_score_elements(B, H, Nq, Nk, chunk)
                                                : softmax_score_elements(B, H, Nq, Nk);
                   return r;
                 }});

  all.push_back({"retention", "RetNet retention (QK^T . D)V, decay gamma_h = 1 - 2^(-5-h); three equivalent forms",
                 {{string_opt("form", "chunkwise", {"parallel", "recurrent", "chunkwise"},
                              "parallel: O(N^2); recurrent: token by token; chunkwise: both mixed"),
                   int_opt("chunk", 64, "chunk length of the chunkwise form", 1)}},
                 {"mask"},
                 [](const json& o, const AttentionTensors& in) {
                   reject(in, "retention", true, false, false);
                   const auto form = parse_retention_form(o.at("form").get<std::string>());
                   const std::int64_t chunk = o.at("chunk").get<std::int64_t>();
                   AttentionRun r;
                   r.out = retention(form, in.q, in.k, in.v, in.mask, chunk);
                   r.score_elements =
                       retention_score_elements(form, in.q.size(0), in.q.size(1), in.q.size(2), chunk);
                   return r;
                 }});
  all.push_back({"tala",
                 "MixFormer time-aware linear attention (decay x bias G) in its well-defined readings; "
                 "pairwise G runs only in parallel form",
                 {{string_opt("form", "chunkwise", {"parallel", "recurrent", "chunkwise", "eq15"},
                              "parallel: O(N^2); recurrent: state + last w pairs; chunkwise: both mixed; eq15: the "
                              "paper's Eq. 15 as printed (G[n,n-1] per step, no normaliser)"),
                   string_opt("bias", "none", {"none", "relative", "pairwise"},
                              "G: none (retention), relative (g(n-m), window w), pairwise (free T x T)"),
                   bool_opt("normalise", false, "Eq. 12's denominator, in every form"),
                   string_opt("feature_map", "auto", {"auto", "identity", "exp-norm"},
                              "phi on q and k: exp(x/||x||) (Eq. 11); auto: exp-norm with normalise, else identity"),
                   int_opt("window", 8, "relative bias: distances with their own value (w); g(w) beyond", 1),
                   int_opt("chunk", 64, "chunk length of the chunkwise form", 1),
                   float_opt("bias_std", 0.5, "the bias G = exp(bias_std * N(0, 1)), drawn from seed (tala_random_bias)"),
                   int_opt("seed", 0, "seed of the random bias")}},
                 {"mask"},
                 [](const json& o, const AttentionTensors& in) {
                   reject(in, "tala", true, false, false);
                   TalaOptions to;
                   to.form = parse_tala_form(o.at("form").get<std::string>());
                   to.bias = parse_tala_bias(o.at("bias").get<std::string>());
                   to.normalise = o.at("normalise").get<bool>();
                   to.feature_map = resolve_tala_feature_map(o.at("feature_map").get<std::string>(), to.normalise);
                   to.chunk = o.at("chunk").get<std::int64_t>();
                   check_tala_options(to);  // refused combinations fail before any work
                   const std::int64_t window = o.at("window").get<std::int64_t>();
                   const std::int64_t B = in.q.size(0), H = in.q.size(1), N = in.q.size(2);
                   const at::Tensor bias =
                       tala_random_bias(to.bias, H, N, window, o.at("bias_std").get<double>(),
                                        static_cast<std::uint64_t>(o.at("seed").get<std::int64_t>()));
                   AttentionRun r;
                   r.out = tala(to, in.q, in.k, in.v, in.mask, {}, bias.defined() ? bias.to(in.q.scalar_type()) : bias);
                   r.score_elements = tala_score_elements(to, B, H, N, window);
                   r.info["decays"] = [&] {
                     json d = json::array();
                     const at::Tensor g = retention_decays(H);
                     for (std::int64_t h = 0; h < H; ++h) d.push_back(g[h].item<double>());
                     return d;
                   }();
                   return r;
                 }});
  return all;
}

json parse_text_value(const std::string& text, const OptionSpec& spec) {
  auto number = [&](const std::string& t, bool integer) -> json {
    std::size_t used = 0;
    try {
      if (integer) {
        const long long v = std::stoll(t, &used);
        if (used == t.size()) return v;
      } else {
        const double v = std::stod(t, &used);
        if (used == t.size()) return v;
      }
    } catch (...) {
    }
    throw UserError("--opt " + spec.name + "=" + text + ": '" + spec.name + "' must be " + type_name(spec.type) +
                    (spec.help.empty() ? "" : " (" + spec.help + ")"));
  };
  switch (spec.type) {
    case OptionType::Int: return number(text, true);
    case OptionType::Float: return number(text, false);
    case OptionType::Bool:
      if (text == "true" || text == "1") return true;
      if (text == "false" || text == "0") return false;
      throw UserError("--opt " + spec.name + "=" + text + ": write true or false");
    case OptionType::String: return text;
    case OptionType::IntList:
    case OptionType::FloatList: {
      std::string body = text;
      if (!body.empty() && body.front() == '[') body.erase(0, 1);
      if (!body.empty() && body.back() == ']') body.pop_back();
      json list = json::array();
      std::size_t start = 0;
      while (start <= body.size() && !body.empty()) {
        const std::size_t comma = body.find(',', start);
        std::string item = body.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        while (!item.empty() && item.front() == ' ') item.erase(0, 1);
        while (!item.empty() && item.back() == ' ') item.pop_back();
        list.push_back(number(item, spec.type == OptionType::IntList));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      return list;
    }
    case OptionType::Bytes: return text;
  }
  return text;
}

}  // namespace

const std::vector<AttentionKernel>& attention_kernels() {
  static const std::vector<AttentionKernel> all = build();
  return all;
}

const AttentionKernel& find_attention_kernel(const std::string& name) {
  std::string known;
  for (const auto& k : attention_kernels()) {
    if (k.name == name) return k;
    known += (known.empty() ? "" : ", ") + k.name;
  }
  throw UserError("unknown attention kernel '" + name + "'; known kernels: " + known);
}

json kernel_options(const AttentionKernel& kernel, const std::vector<std::string>& assignments) {
  json out = kernel.schema.defaults(json::object());
  for (const auto& a : assignments) {
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UserError("--opt '" + a + "': write key=value (options of " + kernel.name + ": " +
                      [&] {
                        std::string s;
                        for (const auto& n : kernel.schema.names()) s += (s.empty() ? "" : ", ") + n;
                        return s;
                      }() +
                      ")");
    const std::string key = a.substr(0, eq), text = a.substr(eq + 1);
    const OptionSpec* spec = kernel.schema.find(key);
    if (!spec) {
      std::string names;
      for (const auto& n : kernel.schema.names()) names += (names.empty() ? "" : ", ") + n;
      throw UserError("--opt " + key + ": " + kernel.name + " has no option '" + key + "'; its options: " + names);
    }
    out[key] = check_json_value(parse_text_value(text, *spec), *spec, "--opt " + key);
  }
  return out;
}

}  // namespace lrb
