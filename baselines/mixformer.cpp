// MixFormer (arXiv 2608.09468): pre-norm layers whose attention is a mixture of memory
// experts (MoME) over time-aware linear attention (TALA, suite/nn/attention/tala.h).
//
// The paper's equations do not fix a computation (its router E_i = softmax(K_n V_n W_g)
// multiplies a d x d product by a 1 x k_e matrix; Eq. 15's bias cannot be Eq. 14's; Eq. 12's
// normaliser vanishes), so this is one defined reading, each choice ours:
//   - Router: per token, p_n = softmax(LN(x_n) W_g) over the k_e experts, W_g of shape
//     D x k_e without bias (the token itself, not K_n V_n, decides). top_k = 0 mixes every
//     expert with p_n; top_k = k >= 2 keeps the k largest and renormalises them to sum to
//     one (top-1 renormalised is the constant 1 and would give the router no gradient). No
//     load-balancing loss; the router's load per expert is recorded instead.
//   - Experts: each expert e has its own TALA state per head: its own decay w_(e,h) and its
//     own bias G (relative table or pairwise matrix). Experts share the layer's q, k, v
//     projections, so more experts means more memory, not more projection parameters. A
//     token is written into expert e's state with weight p_(n,e) (it multiplies phi(k_n))
//     and read back with the same weight: o_n = sum_e p_(n,e) TALA_e(q, p_e k, v)_n, as
//     mixture-of-memories models do (MoM, arXiv 2502.13685).
//   - Decays are fixed, not learned (the paper's Eq. 13 and RetNet both set them by a
//     formula): w = 1 - 2^(-x) with x evenly spaced over [5, 12] across the k_e * H
//     memories, expert-major, so expert 0 holds the shortest memories and the last expert
//     the longest (RetNet with 8 heads spans the same range).
//   - Bias G = exp(b), b learned (initialised N(0, bias_init_std^2); 0 gives G = 1, i.e.
//     retention at initialisation). Positive, so Eq. 12's denominator stays positive.
//   - Scale: q times 1/sqrt(d_head). Without the normaliser each head's output goes through
//     a LayerNorm without affine (RetNet's GroupNorm): the unnormalised sums grow with the
//     decay's horizon. With it, Eq. 12's denominator already fixes the scale.
//   - Pooling: the last real token by default (the layers are causal, so only the last
//     token has read the whole sequence); mean as an option.
//   - No gate on the attention output (RetNet's swish gate) and no changes to the shared
//     encoder layer: attention is the only part that differs from the Transformer.
// check_form (a diagnostic for the equivalence study): every TALA call also runs the
// parallel form in float64 and the named form in float32 on the same q, k, v and bias, and
// the largest max|O_form - O_parallel| / max|O_parallel| over the timed steps is the figure
// `form_gap` of a measurement run. eq15 compares with Eq. 15 as printed (no normaliser).
#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "suite/nn/attention/tala.h"
#include "suite/nn/encoder_layer.h"
#include "suite/nn/input_stem.h"
#include "suite/registry/registry.h"
#include "suite/contracts/model.h"

namespace lrb {
namespace {

struct Config {
  std::int64_t dim, depth, heads, mlp_ratio, classes, tokens;
  double dropout;
  std::int64_t experts, top_k, window;
  double bias_init_std;
  TalaOptions tala;
  bool check = false;
  TalaForm check_form = TalaForm::Parallel;
  bool last_pooling;
};

std::int64_t tokens_of(const json& o, const TaskInfo& t) {
  std::int64_t n = 1;
  for (auto g : stem_grid(t, stem_config(o, o.at("dim")))) n *= g;
  return n;
}

Config config_of(const json& o, const TaskInfo& t) {
  Config c{o.at("dim"), o.at("depth"), o.at("heads"), o.at("mlp_ratio"), t.num_classes, tokens_of(o, t),
           o.at("dropout"), o.at("experts"), o.at("top_k"), o.at("window"), o.at("bias_init_std"), {}};
  c.tala.form = parse_tala_form(o.at("form").get<std::string>());
  c.tala.bias = parse_tala_bias(o.at("bias").get<std::string>());
  c.tala.normalise = o.at("normalise").get<bool>();
  c.tala.feature_map = resolve_tala_feature_map("auto", c.tala.normalise);
  c.tala.chunk = o.at("chunk");
  const std::string check = o.at("check_form");
  c.check = check != "none";
  if (c.check) c.check_form = parse_tala_form(check);
  c.last_pooling = o.at("pooling") == "last";
  return c;
}

// Decays of the E * H memories, expert-major: float64 [E * H].
at::Tensor expert_decays(std::int64_t experts, std::int64_t heads) {
  const std::int64_t m = experts * heads;
  const at::Tensor i = at::arange(m, at::kDouble);
  const at::Tensor x = m > 1 ? 5.0 + 7.0 * i / static_cast<double>(m - 1) : at::full({1}, 5.0, at::kDouble);
  return 1.0 - at::pow(2.0, -x);
}

class MomeImpl : public torch::nn::Module {
 public:
  MomeImpl(const Config& c) : c_(c), decays_(expert_decays(c.experts, c.heads)) {
    if (c.experts > 1) router_ = register_module("router", torch::nn::Linear(torch::nn::LinearOptions(c.dim, c.experts).bias(false)));
    const std::int64_t m = c.experts * c.heads;
    if (c.tala.bias == TalaBias::Relative)
      log_bias_ = register_parameter("log_bias", at::randn({m, c.window + 1}) * c.bias_init_std);
    else if (c.tala.bias == TalaBias::Pairwise)
      log_bias_ = register_parameter("log_bias", at::randn({m, c.tokens, c.tokens}) * c.bias_init_std);
    load_sum_ = at::zeros({c.experts}, at::kDouble);
  }

  // q, k, v [B, H, N, dh]; xn [B, N, D] (the normalised layer input); keep [B, N] or undefined.
  at::Tensor forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& xn,
                     const at::Tensor& keep) {
    const std::int64_t B = q.size(0), H = q.size(1), N = q.size(2), dh = q.size(3), E = c_.experts;
    const at::Tensor qs = q * (1.0 / std::sqrt(static_cast<double>(dh)));
    const at::Tensor bias = log_bias_.defined() ? log_bias_.exp() : at::Tensor();
    at::Tensor out;
    if (E == 1) {
      out = tala(c_.tala, qs, k, v, keep, decays_, bias);
      if (!is_training()) track_load(at::ones({B, N, 1}, q.options()), keep);
      if (c_.check) check(qs, k, v, keep, bias, {});
    } else {
      const at::Tensor weights = route(xn);  // [B, N, E]
      if (!is_training()) track_load(weights, keep);
      auto stack = [&](const at::Tensor& x) {
        return x.unsqueeze(1).expand({B, E, H, N, x.size(3)}).reshape({B, E * H, N, x.size(3)});
      };
      const at::Tensor w = weights.permute({0, 2, 1});  // [B, E, N]
      const at::Tensor write = w.unsqueeze(2).expand({B, E, H, N}).reshape({B, E * H, N});
      const at::Tensor qe = stack(qs), ke = stack(k), ve = stack(v);
      const at::Tensor o = tala(c_.tala, qe, ke, ve, keep, decays_, bias, write);
      out = (o.view({B, E, H, N, dh}) * w.view({B, E, 1, N, 1})).sum(1);
      if (c_.check) check(qe, ke, ve, keep, bias, write);
    }
    if (!c_.tala.normalise) out = at::layer_norm(out, {dh});
    return out;
  }

  // Router weights [B, N, E]: softmax, or the top_k largest renormalised.
  at::Tensor route(const at::Tensor& xn) {
    at::Tensor p = at::softmax(router_->forward(xn), -1);
    if (c_.top_k > 0 && c_.top_k < c_.experts) {
      const at::Tensor chosen = at::zeros_like(p).scatter_(-1, std::get<1>(p.topk(c_.top_k, -1)), 1.0);
      p = p * chosen;
      p = p / p.sum(-1, true);
    }
    return p;
  }

  void track_load(const at::Tensor& weights, const at::Tensor& keep) {
    at::NoGradGuard ng;
    if (was_training_) {  // a new evaluation pass: count it alone
      load_sum_.zero_();
      load_tokens_ = 0;
      was_training_ = false;
    }
    at::Tensor w = weights.detach().to(at::kDouble).cpu();
    if (keep.defined()) {
      const at::Tensor k = keep.to(at::kDouble).cpu().unsqueeze(-1);
      w = w * k;
      load_tokens_ += k.sum().item<double>();
    } else {
      load_tokens_ += static_cast<double>(w.size(0) * w.size(1));
    }
    load_sum_ += w.sum(at::IntArrayRef{0, 1});
  }

  void mark_training() { was_training_ = true; }

  // max|O_form - O_parallel| / max|O_parallel|: the form under test in the model's dtype, the
  // parallel form in float64, on the same inputs.
  void check(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& keep,
             const at::Tensor& bias, const at::Tensor& write) {
    at::NoGradGuard ng;
    TalaOptions ref = c_.tala, got = c_.tala;
    ref.form = TalaForm::Parallel;
    got.form = c_.check_form;
    if (got.form == TalaForm::Eq15) got.normalise = false;  // Eq. 15 as printed (same phi)
    auto f64 = [](const at::Tensor& t) { return t.defined() ? t.detach().to(at::kDouble) : t; };
    const at::Tensor want = tala(ref, f64(q), f64(k), f64(v), keep, decays_, f64(bias), f64(write));
    const at::Tensor have = tala(got, q.detach(), k.detach(), v.detach(), keep, decays_,
                                 bias.defined() ? bias.detach() : bias, write.defined() ? write.detach() : write);
    const double denom = want.abs().max().item<double>();
    const double scale = denom > 0 ? denom : 1.0;
    double gap = (have.to(at::kDouble) - want).abs().max().item<double>() / scale;
    // A form whose float32 output overflowed has no finite gap (inf − inf is NaN, which
    // std::max would drop, recording 0: agreement). It is at least float32's largest value.
    if (!std::isfinite(gap)) gap = static_cast<double>(std::numeric_limits<float>::max()) / scale;
    max_gap_ = std::max(max_gap_, gap);
    ++checks_;
  }

  json load() const {
    json out = json::array();
    for (std::int64_t e = 0; e < c_.experts; ++e)
      out.push_back(load_tokens_ > 0 ? load_sum_[e].item<double>() / load_tokens_ : 0.0);
    return out;
  }

  const at::Tensor& decays() const { return decays_; }
  double max_gap_ = 0;
  std::int64_t checks_ = 0;

 private:
  Config c_;
  at::Tensor decays_;
  torch::nn::Linear router_{nullptr};
  at::Tensor log_bias_;
  at::Tensor load_sum_;
  double load_tokens_ = 0;
  bool was_training_ = true;
};
TORCH_MODULE(Mome);

class MixFormer final : public Model {
 public:
  MixFormer(const Config& c, const TaskInfo& task, const StemConfig& stem) : c_(c) {
    stem_ = register_module("stem", InputStem(task, stem));
    const EncoderLayerOptions lo{c.dim, c.heads, c.mlp_ratio, c.dropout};
    for (std::int64_t i = 0; i < c.depth; ++i) {
      layers_.push_back(register_module("layer" + std::to_string(i), EncoderLayer(lo)));
      mome_.push_back(register_module("mome" + std::to_string(i), Mome(c)));
    }
    head_ = register_module("head", ClassifierHead(c.dim, c.classes, c.last_pooling));
  }

  at::Tensor forward(const at::Tensor& x) override {
    StemOutput s = stem_->forward(x);
    at::Tensor h = s.tokens;
    const at::Tensor keep = s.keep;
    if (is_training())
      for (auto& m : mome_) m->mark_training();
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      auto& mome = mome_[i];
      h = layers_[i]->forward(h, [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& xn) {
        return mome->forward(q, k, v, xn, keep);
      });
    }
    // "last": the head's first-token pooling on the last real token.
    return c_.last_pooling ? head_->forward(last_real_token(h, keep), at::Tensor()) : head_->forward(h, keep);
  }

  nlohmann::json records() const override {
    json r;
    r["reading"] = {{"bias", tala_bias_name(c_.tala.bias)},
                    {"normalise", c_.tala.normalise},
                    {"form", tala_form_name(c_.tala.form)},
                    {"experts", c_.experts},
                    {"top_k", c_.top_k}};
    // Mean routing weight per expert over the real tokens of the last evaluation pass.
    r["router_load"] = json::array();
    for (const auto& m : mome_) r["router_load"].push_back(m->load());
    json d = json::array();
    const at::Tensor decays = expert_decays(c_.experts, c_.heads).view({c_.experts, c_.heads});
    for (std::int64_t e = 0; e < c_.experts; ++e) {
      json row = json::array();
      for (std::int64_t h = 0; h < c_.heads; ++h) row.push_back(decays[e][h].item<double>());
      d.push_back(row);
    }
    r["decays"] = d;  // [expert][head]
    if (c_.check) r["form_gap"] = figures().at("form_gap");
    return r;
  }

  void reset_figures() override {
    for (auto& m : mome_) {
      m->max_gap_ = 0;
      m->checks_ = 0;
    }
  }

  std::map<std::string, double> figures() const override {
    if (!c_.check) return {};
    double gap = 0;
    for (const auto& m : mome_) gap = std::max(gap, m->max_gap_);
    return {{"form_gap", gap}};
  }

 private:
  Config c_;
  InputStem stem_{nullptr};
  std::vector<EncoderLayer> layers_;
  std::vector<Mome> mome_;
  ClassifierHead head_{nullptr};
};

// Forward FLOPs of TALA over all memories M = E * H (head dim dh, value width dv).
double tala_flops(const Config& c, double n, double dh, double memories) {
  const double dv = dh + (c.tala.normalise ? 1 : 0);
  // The relative band: each query's w nearest keys, as the fused CPU kernel computes it
  // (tala_band.h; on a GPU the blocked products score 64 + w - 1 keys a query, these w
  // among them).
  const double w = std::min(static_cast<double>(c.window), n);
  const double band = c.tala.bias == TalaBias::Relative ? 2 * (n * w - w * (w - 1) / 2) * (dh + dv) : 0;
  double per;
  switch (c.tala.form) {
    case TalaForm::Parallel: per = 2 * n * n * (dh + dv); break;
    case TalaForm::Recurrent: per = 2 * n * dh * dv * 2 + band; break;
    default: {
      const double chunk = std::min<double>(static_cast<double>(c.tala.chunk), n);
      per = 2 * n * chunk * (dh + dv) + 2 * n * dh * dv * 2 + band;
    }
  }
  return memories * per;
}

double mixformer_flops(const json& o, const TaskInfo& t) {
  const Config c = config_of(o, t);
  const double n = static_cast<double>(c.tokens), d = static_cast<double>(c.dim);
  const double dh = d / static_cast<double>(c.heads), E = static_cast<double>(c.experts);
  double attn = tala_flops(c, n, dh, E * static_cast<double>(c.heads));
  if (c.experts > 1) attn += 2 * n * d * E + 2 * n * E * d;  // router logits; mixing the expert outputs
  return stem_flops(t, stem_config(o, c.dim)) +
         static_cast<double>(c.depth) * encoder_layer_flops(n, d, static_cast<double>(c.mlp_ratio), attn) +
         2 * d * static_cast<double>(c.classes);
}

void resolve(json& o, const json& task) {
  check_heads_divide_dim(o);
  const std::int64_t experts = o.at("experts"), top_k = o.at("top_k");
  if (top_k == 1)
    throw OptionError("top_k", "top_k = 1 renormalised is the constant 1, which gives the router no gradient; use 0 "
                               "(every expert) or 2..experts");
  if (top_k > experts)
    throw OptionError(std::vector<std::string>{"top_k", "experts"},
                      "top_k (" + std::to_string(top_k) + ") exceeds experts (" + std::to_string(experts) + ")");
  TalaOptions to;
  to.bias = parse_tala_bias(o.at("bias").get<std::string>());
  to.normalise = o.at("normalise").get<bool>();
  to.feature_map = resolve_tala_feature_map("auto", to.normalise);
  to.form = parse_tala_form(o.at("form").get<std::string>());
  try {
    check_tala_options(to);
  } catch (const UserError& e) {
    throw OptionError(std::vector<std::string>{"form", "bias"}, e.what());
  }
  const std::string check = o.at("check_form");
  if (check != "none") {
    to.form = parse_tala_form(check);
    if (to.form == TalaForm::Eq15) to.normalise = false;
    try {
      check_tala_options(to);
    } catch (const UserError& e) {
      throw OptionError(std::vector<std::string>{"check_form", "bias"}, e.what());
    }
  }
  if (to.bias == TalaBias::Pairwise) {
    const std::int64_t T = tokens_of(o, TaskInfo::from_json(task));
    const double params = static_cast<double>(experts * o.at("heads").get<std::int64_t>()) * static_cast<double>(T * T);
    if (params > 64e6)
      throw OptionError("bias", "bias = \"pairwise\" learns experts x heads x T x T = " + std::to_string(static_cast<std::int64_t>(params)) +
                                    " values per layer at T = " + std::to_string(T) + "; use \"relative\" for long inputs");
  }
}

ModelEntry mixformer_entry() {
  ModelEntry e;
  e.name = "mixformer";
  e.summary = "MixFormer: memory experts (router over k_e TALA states with their own decays) in pre-norm layers";
  e.modalities = {Modality::Tokens, Modality::Signal, Modality::Grid};
  e.schema.options = encoder_option_specs();
  e.schema.options.insert(e.schema.options.end(), {
      {"experts", OptionType::Int, json(4), "memory experts k_e, each its own TALA state per head", {}, 1, 64},
      {"top_k", OptionType::Int, json(0), "experts per token: 0 = all, mixed by the router softmax; k >= 2: the top k, renormalised", {}, 0, 64},
      {"bias", OptionType::String, json("relative"), "TALA's G: none (retention), relative (g(n-m), fixed window), pairwise (T x T, parallel only)",
       {"none", "relative", "pairwise"}},
      {"window", OptionType::Int, json(8), "relative bias: distances with their own value; one value beyond", {}, 1, 4096},
      {"bias_init_std", OptionType::Float, json(0.0), "G = exp(b), b ~ N(0, std^2) at init; 0: G = 1", {}, 0.0, 4.0},
      {"normalise", OptionType::Bool, json(false), "Eq. 12's denominator (with phi = exp(x/||x||)); off: per-head LayerNorm"},
      {"form", OptionType::String, json("chunkwise"), "TALA form used to train and evaluate", {"parallel", "recurrent", "chunkwise"}},
      {"chunk", OptionType::Int, json(64), "chunk length of the chunkwise form", {}, 1, 65536},
      {"check_form", OptionType::String, json("none"),
       "diagnostic: also run this form and record form_gap against the float64 parallel form (measurement runs)",
       {"none", "parallel", "recurrent", "chunkwise", "eq15"}},
      {"pooling", OptionType::String, json("last"), "sequence summary: the last real token (causal layers) or the mean", {"last", "mean"}},
  });
  for (auto& o : stem_option_specs(4)) e.schema.options.push_back(o);
  e.schema.resolve = resolve;
  e.flops = mixformer_flops;
  e.small_options = {{"dim", 32}, {"depth", 1}, {"heads", 2}, {"dropout", 0.0}, {"experts", 2}, {"window", 4}};
  e.make = [](const json& o, const TaskInfo& t) -> std::shared_ptr<Model> {
    return std::make_shared<MixFormer>(config_of(o, t), t, stem_config(o, o.at("dim")));
  };
  e.params = params_by_building(e.make);
  return e;
}

LRB_REGISTER_MODEL(mixformer_entry());

}  // namespace
}  // namespace lrb
