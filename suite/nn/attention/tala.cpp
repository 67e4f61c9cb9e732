#include "suite/nn/attention/tala.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <vector>

#include "suite/core/errors.h"
#include "suite/core/shape_text.h"
#include "suite/nn/attention/common.h"
#include "suite/nn/attention/kernel_registry.h"
#include "suite/nn/attention/retention.h"
#include "suite/nn/batched_matmul.h"
#include "suite/nn/cpu/tala_band.h"

namespace lrb {
namespace {

const std::string kName = "tala";

// decays^(exponent) in `like`'s dtype: [H, *exponent.shape].
at::Tensor powers(const at::Tensor& log_decay, const at::Tensor& exponent, const at::Tensor& like) {
  std::vector<std::int64_t> shape{log_decay.size(0)};
  for (std::int64_t i = 0; i < exponent.dim(); ++i) shape.push_back(1);
  return (log_decay.to(like.scalar_type()).view(shape) * exponent.to(like.scalar_type()).unsqueeze(0)).exp();
}

// Validated decays (float64 [H] on the device of `like`) and bias window.
struct Checked {
  at::Tensor decays;      // float64 [H]
  at::Tensor log_decay;   // float64 [H] on the device
  std::int64_t window = 0;  // relative: w
};

Checked check_inputs(const TalaOptions& o, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                     const at::Tensor& decays, const at::Tensor& bias, const at::Tensor& write) {
  check_tala_options(o);
  check_qkv(q, k, v, kName);
  if (q.size(2) != k.size(2)) throw UserError("tala is causal, so q and k need the same tokens");
  const std::int64_t B = q.size(0), H = q.size(1), N = q.size(2);
  Checked c;
  c.decays = decays.defined() ? decays.detach().to(at::kDouble).cpu() : retention_decays(H);
  if (c.decays.dim() != 1 || c.decays.size(0) != H)
    throw UserError("tala: decays must be [H] = [" + std::to_string(H) + "]; got " + shape_text(c.decays.sizes()));
  if (c.decays.le(0).any().item<bool>() || c.decays.gt(1).any().item<bool>())
    throw UserError("tala: decays must lie in (0, 1]");
  c.log_decay = c.decays.log().to(q.device());
  switch (o.bias) {
    case TalaBias::None:
      if (bias.defined()) throw UserError("tala: bias=none takes no bias tensor");
      break;
    case TalaBias::Relative:
      if (!bias.defined() || bias.dim() != 2 || bias.size(0) != H || bias.size(1) < 2)
        throw UserError("tala: bias=relative needs a table [H, w+1] = g(0..w-1), g(w) with w >= 1; got " +
                        (bias.defined() ? shape_text(bias.sizes()) : std::string("none")));
      c.window = bias.size(1) - 1;
      break;
    case TalaBias::Pairwise:
      if (!bias.defined() || bias.dim() != 3 || bias.size(0) != H || bias.size(1) < N || bias.size(2) != bias.size(1))
        throw UserError("tala: bias=pairwise needs G [H, T, T] with T >= N = " + std::to_string(N) + "; got " +
                        (bias.defined() ? shape_text(bias.sizes()) : std::string("none")));
      break;
  }
  if (bias.defined()) {
    if (!at::isFloatingType(bias.scalar_type())) throw UserError("tala: the bias must be floating point");
    if (o.normalise && bias.detach().le(0).any().item<bool>())
      throw UserError("tala: with normalise the bias must be positive (a non-positive D could zero Eq. 12's denominator)");
  }
  if (write.defined() && (write.dim() != 3 || write.size(0) != B || write.size(1) != H || write.size(2) != N))
    throw UserError("tala: write weights must be [B, H, N]; got " + shape_text(write.sizes()));
  return c;
}

at::Tensor feature(const at::Tensor& x, TalaFeatureMap map) {
  if (map == TalaFeatureMap::Identity) return x;
  // Eq. 11: exp(x / ||x||), the norm over each row's features.
  return at::exp(x / x.norm(2, -1, true).clamp_min(1e-12));
}

// D[h, n, m] in like's dtype, differentiable in the bias: [H, N, N].
at::Tensor decay_mask(TalaBias kind, const at::Tensor& log_decay, const at::Tensor& bias, std::int64_t N,
                      const at::Tensor& like) {
  const at::Tensor pos = at::arange(N, like.options().dtype(at::kLong));
  const at::Tensor diff = pos.view({N, 1}) - pos.view({1, N});
  at::Tensor D = powers(log_decay, diff.clamp_min(0), like).masked_fill(diff.lt(0), 0);
  if (kind == TalaBias::Relative) {
    const std::int64_t H = bias.size(0), w = bias.size(1) - 1;
    const at::Tensor idx = diff.clamp(0, w).reshape({-1});
    D = D * bias.to(like.scalar_type()).index_select(1, idx).view({H, N, N});
  } else if (kind == TalaBias::Pairwise) {
    D = D * bias.to(like.scalar_type()).narrow(1, 0, N).narrow(2, 0, N);
  }
  return D;
}

// sum over delta < w of c[h, delta] (q_n . k_(n-delta)) v_(n-delta): the relative bias's band,
// read from the last w keys of each query. Blocked: each block of b queries scores the
// b + w - 1 keys that end with it (a view of the left-padded keys) and weights them by one
// b x (b + w - 1) band of coefficients shared by every block; O(N (b + w)) scores.
at::Tensor band(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& c) {
  const std::int64_t B = q.size(0), H = q.size(1), N = q.size(2), d = q.size(3), dv = v.size(3);
  const std::int64_t w = c.size(1), b = std::min<std::int64_t>(64, N), nc = ceil_div(N, b), pad = nc * b - N;
  const std::int64_t span = b + w - 1;
  const at::Tensor q5 = pad_tokens(q, 0, pad).view({B, H, nc, b, d});
  // Padded position p = m + w - 1; block j's keys are p in [j b, j b + span).
  const at::Tensor kw = pad_tokens(k, w - 1, pad).unfold(2, span, b);  // [B, H, nc, d, span]
  const at::Tensor vw = pad_tokens(v, w - 1, pad).unfold(2, span, b).transpose(-2, -1);  // [B, H, nc, span, dv]
  // Query i of a block and key slot j are delta = i + w - 1 - j apart.
  const auto lopts = q.options().dtype(at::kLong);
  const at::Tensor delta = at::arange(b, lopts).view({b, 1}) + (w - 1) - at::arange(span, lopts).view({1, span});
  const at::Tensor inside = delta.ge(0).logical_and(delta.lt(w));
  const at::Tensor coef = c.index_select(1, delta.clamp(0, w - 1).reshape({-1})).view({H, b, span}) *
                          inside.to(c.scalar_type()).unsqueeze(0);
  const at::Tensor out = batched_matmul(batched_matmul(q5, kw) * coef.view({1, H, 1, b, span}), vw);
  return out.view({B, H, nc * b, dv}).narrow(2, 0, N);
}

// Relative bias as g(w) times retention plus the band (g(delta) - g(w)) w^delta, delta < w.
at::Tensor relative_split(TalaForm form, std::int64_t chunk, const at::Tensor& q, const at::Tensor& k,
                          const at::Tensor& v, const Checked& c, const at::Tensor& bias) {
  const std::int64_t H = q.size(1), w = c.window;
  const at::Tensor g = bias.to(q.scalar_type());
  const at::Tensor far = g.select(1, w);
  const at::Tensor coef = (g.narrow(1, 0, w) - far.unsqueeze(1)) *
                          powers(c.log_decay, at::arange(w, q.options().dtype(at::kLong)), q);
  const at::Tensor decayed = form == TalaForm::Recurrent ? retention_recurrent(q, k, v, {}, c.decays)
                                                         : retention_chunkwise(q, k, v, {}, chunk, c.decays);
  const at::Tensor near = tala_band_fused_applies(q) ? tala_band_fused(q, k, v, coef) : band(q, k, v, coef);
  return decayed * far.view({1, H, 1, 1}) + near;
}

// Eq. 15 as printed, with G[n, n-1] as the step factor: a token loop over a d x dv state.
at::Tensor eq15(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const Checked& c, TalaBias kind,
                const at::Tensor& bias) {
  const std::int64_t B = q.size(0), H = q.size(1), N = q.size(2), d = q.size(3), dv = v.size(3);
  at::Tensor step = c.log_decay.exp().to(q.scalar_type()).view({H, 1}).expand({H, N});
  if (kind == TalaBias::Relative) {
    step = step * bias.to(q.scalar_type()).select(1, std::min<std::int64_t>(1, c.window)).view({H, 1});
  } else if (kind == TalaBias::Pairwise && N > 1) {
    // G[h, n, n-1] for n >= 1 (the factor at n = 0 multiplies an empty state).
    const at::Tensor sub = bias.to(q.scalar_type()).narrow(1, 1, N - 1).narrow(2, 0, N - 1).diagonal(0, 1, 2);
    step = step * at::cat({at::ones({H, 1}, sub.options()), sub}, 1);
  }
  at::Tensor state = at::zeros({B, H, d, dv}, q.options());
  std::vector<at::Tensor> outs;
  outs.reserve(N);
  for (std::int64_t n = 0; n < N; ++n) {
    state = state * step.select(1, n).view({1, H, 1, 1}) +
            k.select(2, n).unsqueeze(-1) * v.select(2, n).unsqueeze(-2);
    outs.push_back(batched_matmul(q.select(2, n).unsqueeze(-2), state).squeeze(-2));
  }
  return at::stack(outs, 2);
}

}  // namespace

TalaForm parse_tala_form(const std::string& name) {
  if (name == "parallel") return TalaForm::Parallel;
  if (name == "recurrent") return TalaForm::Recurrent;
  if (name == "chunkwise") return TalaForm::Chunkwise;
  if (name == "eq15") return TalaForm::Eq15;
  throw UserError("tala: unknown form '" + name + "'; use parallel, recurrent, chunkwise or eq15");
}

TalaBias parse_tala_bias(const std::string& name) {
  if (name == "none") return TalaBias::None;
  if (name == "relative") return TalaBias::Relative;
  if (name == "pairwise") return TalaBias::Pairwise;
  throw UserError("tala: unknown bias '" + name + "'; use none, relative or pairwise");
}

const char* tala_form_name(TalaForm f) {
  switch (f) {
    case TalaForm::Parallel: return "parallel";
    case TalaForm::Recurrent: return "recurrent";
    case TalaForm::Chunkwise: return "chunkwise";
    case TalaForm::Eq15: return "eq15";
  }
  return "?";
}

const char* tala_bias_name(TalaBias b) {
  switch (b) {
    case TalaBias::None: return "none";
    case TalaBias::Relative: return "relative";
    case TalaBias::Pairwise: return "pairwise";
  }
  return "?";
}

TalaFeatureMap resolve_tala_feature_map(const std::string& name, bool normalise) {
  if (name == "auto") return normalise ? TalaFeatureMap::ExpNorm : TalaFeatureMap::Identity;
  if (name == "exp-norm") return TalaFeatureMap::ExpNorm;
  if (name == "identity") {
    if (normalise)
      throw UserError("tala: normalise=true divides by phi(q_n) . sum_m D[n,m] phi(k_m), which is positive only for a "
                      "positive feature map; use feature_map=exp-norm (Eq. 11) or auto");
    return TalaFeatureMap::Identity;
  }
  throw UserError("tala: unknown feature_map '" + name + "'; use auto, identity or exp-norm");
}

void check_tala_options(const TalaOptions& o) {
  if (o.bias == TalaBias::Pairwise && (o.form == TalaForm::Recurrent || o.form == TalaForm::Chunkwise))
    throw UserError(std::string("tala: bias=pairwise has no ") + tala_form_name(o.form) +
                    " form: G[n,m] is a free value for every pair of positions, so the weight of key m in the "
                    "output at n is unknown until n arrives; a recurrent state would have to keep every earlier "
                    "(k_m, v_m), memory growing with T, not a fixed d x d state (Eq. 15 multiplies that state by "
                    "a T x T matrix). Use form=parallel, or bias=relative (G a function of n - m with a fixed "
                    "window), which has an exact recurrence");
  if (o.form == TalaForm::Eq15 && o.normalise)
    throw UserError("tala: form=eq15 is Eq. 15 as printed, which has no normaliser; for the recurrence with Eq. 12's "
                    "denominator use form=recurrent with normalise=true");
  if (o.normalise && o.feature_map == TalaFeatureMap::Identity)
    resolve_tala_feature_map("identity", true);  // throws with the reason
  if (o.chunk < 1) throw UserError("tala: chunk must be >= 1");
}

at::Tensor tala(const TalaOptions& o, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                const at::Tensor& mask, const at::Tensor& decays, const at::Tensor& bias, const at::Tensor& write) {
  const Checked c = check_inputs(o, q, k, v, decays, bias, write);
  const std::int64_t B = q.size(0), N = q.size(2), dv = v.size(3);
  const at::Tensor qf = feature(q, o.feature_map);
  at::Tensor kf = feature(k, o.feature_map);
  const at::Tensor keep = check_key_mask(mask, B, N, q, kName);
  if (keep.defined()) kf = kf * keep.view({B, 1, N, 1}).to(kf.scalar_type());
  if (write.defined()) kf = kf * write.unsqueeze(-1).to(kf.scalar_type());
  // The normaliser rides along as an extra value column of ones.
  const at::Tensor vv = o.normalise ? at::cat({v, at::ones({B, v.size(1), N, 1}, v.options())}, -1) : v;

  at::Tensor out;
  switch (o.form) {
    case TalaForm::Parallel:
      out = batched_matmul(batched_matmul(qf, kf.transpose(-2, -1)) * decay_mask(o.bias, c.log_decay, bias, N, q).unsqueeze(0), vv);
      break;
    case TalaForm::Recurrent:
    case TalaForm::Chunkwise:
      if (o.bias == TalaBias::Relative) {
        out = relative_split(o.form, o.chunk, qf, kf, vv, c, bias);
      } else {
        out = o.form == TalaForm::Recurrent ? retention_recurrent(qf, kf, vv, {}, c.decays)
                                            : retention_chunkwise(qf, kf, vv, {}, o.chunk, c.decays);
      }
      break;
    case TalaForm::Eq15: out = eq15(qf, kf, vv, c, o.bias, bias); break;
  }
  if (!o.normalise) return out;
  // A row with no real key has 0 / 0: divide by 1 there (its numerator is 0).
  const at::Tensor den = out.narrow(-1, dv, 1);
  return out.narrow(-1, 0, dv) / at::where(den.eq(0), at::ones_like(den), den);
}

at::Tensor tala_decay_mask(TalaBias bias_kind, const at::Tensor& decays, const at::Tensor& bias, std::int64_t tokens) {
  const at::Tensor like = at::empty({0}, at::kDouble);
  return decay_mask(bias_kind, decays.to(at::kDouble).log(), bias.defined() ? bias.to(at::kDouble) : bias, tokens, like);
}

std::int64_t tala_score_elements(const TalaOptions& o, std::int64_t batch, std::int64_t heads, std::int64_t tokens,
                                 std::int64_t window, bool fused_band) {
  // The fused band scores each query's w nearest keys; the general one's blocks of
  // b = min(64, N) queries score b + w - 1 keys each.
  const std::int64_t b = std::min<std::int64_t>(64, tokens);
  const std::int64_t band = o.bias != TalaBias::Relative ? 0
                            : fused_band ? tala_band_fused_score_elements(batch, heads, tokens, window)
                                         : batch * heads * ceil_div(tokens, b) * b * (b + window - 1);
  switch (o.form) {
    case TalaForm::Parallel: return batch * heads * tokens * tokens;
    case TalaForm::Recurrent: return band;
    case TalaForm::Chunkwise:
      return retention_score_elements(RetentionForm::Chunkwise, batch, heads, tokens, o.chunk) + band;
    case TalaForm::Eq15: return 0;
  }
  return 0;
}

at::Tensor tala_random_bias(TalaBias bias, std::int64_t heads, std::int64_t tokens, std::int64_t window, double std,
                            std::uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  switch (bias) {
    case TalaBias::None: return {};
    case TalaBias::Relative: return (at::randn({heads, window + 1}, gen, at::kDouble) * std).exp_();
    case TalaBias::Pairwise: return (at::randn({heads, tokens, tokens}, gen, at::kDouble) * std).exp_();
  }
  return {};
}

namespace {

// `lrbench attend --kernel tala`: its options and how it runs on q, k, v.
AttentionKernel tala_kernel() {
  using namespace kernel_spec;
  return {"tala",
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
            [] {
              // exp(8 · 6 sd) stays far inside float32 (it overflows past exp(88)); a larger
              // spread gave inf and NaN outputs without a word.
              OptionSpec o = float_opt("bias_std", 0.5, "the bias G = exp(bias_std * N(0, 1)), drawn from seed (tala_random_bias); at most 8");
              o.max = 8.0;
              return o;
            }(),
            int_opt("seed", 0, "seed of the random bias")}},
          {"mask", "decays", "bias"},
          [](const json& o, const AttentionTensors& in) {
            reject(in, "tala", true, false, false);
            TalaOptions to;
            to.form = parse_tala_form(o.at("form").get<std::string>());
            to.bias = parse_tala_bias(o.at("bias").get<std::string>());
            to.normalise = o.at("normalise").get<bool>();
            to.feature_map = resolve_tala_feature_map(o.at("feature_map").get<std::string>(), to.normalise);
            to.chunk = o.at("chunk").get<std::int64_t>();
            check_tala_options(to);  // refused combinations fail before any work
            const std::int64_t B = in.q.size(0), H = in.q.size(1), N = in.q.size(2);
            // The user's decays and G when given (e.g. the paper's Eq. 13 decays), else
            // retention's decays and a G drawn from seed; both written out as used.
            const at::Tensor bias = in.bias.defined()
                                        ? in.bias.to(at::kDouble)
                                        : tala_random_bias(to.bias, H, N, o.at("window").get<std::int64_t>(),
                                                           o.at("bias_std").get<double>(),
                                                           static_cast<std::uint64_t>(o.at("seed").get<std::int64_t>()));
            const at::Tensor decays = in.decays.defined() ? in.decays.to(at::kDouble) : retention_decays(H);
            const std::int64_t window =
                to.bias == TalaBias::Relative && bias.defined() && bias.dim() == 2 ? bias.size(1) - 1 : o.at("window").get<std::int64_t>();
            AttentionRun r;
            r.out = tala(to, in.q, in.k, in.v, in.mask, decays, bias.defined() ? bias.to(in.q.scalar_type()) : bias);
            r.score_elements = tala_score_elements(to, B, H, N, window, tala_band_fused_applies(in.q));
            r.info["decays"] = [&] {
              json d = json::array();
              for (std::int64_t h = 0; h < H; ++h) d.push_back(decays[h].item<double>());
              return d;
            }();
            r.values["decays"] = decays;
            if (bias.defined()) r.values["bias"] = bias;
            return r;
          }};
}

}  // namespace

LRB_REGISTER_ATTENTION_KERNEL(80, tala_kernel());

}  // namespace lrb
