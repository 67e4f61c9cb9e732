#include "tests/support/sequential_sim.h"

#include <boost/math/distributions/beta.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "suite/config/claim_spec.h"
#include "suite/config/run_spec.h"
#include "suite/core/errors.h"
#include "suite/report/claims/claims.h"
#include "suite/report/claims/sequential_claims.h"
#include "suite/stats/t_tests.h"

namespace lrb::test {

const char* rule_name(Rule r) {
  switch (r) {
    case Rule::Sequential: return "sequential (lrbench)";
    case Rule::NaiveRepeated: return "naive: fixed-n interval at every look";
    case Rule::Fixed: return "fixed design at max";
  }
  return "?";
}

const char* differences_name(Differences d) { return d == Differences::Normal ? "normal" : "heavy-tailed (t, 3 df)"; }

namespace {

constexpr const char* kRatioFigure = "step_seconds_median";  // a sampled figure, positive

ClaimSpec better_claim(std::int64_t max) {
  ClaimSpec c;
  c.name = "a-beats-b";
  c.statement = "A is more accurate than B";
  c.source = "simulation";
  c.kind = ClaimKind::Better;
  c.metric = "eval_accuracy";
  c.a.match = {{"model.name", "a"}};
  c.a.label = "a";
  c.b.match = {{"model.name", "b"}};
  c.b.label = "b";
  c.a.expected_runs = c.b.expected_runs = static_cast<std::size_t>(max);
  return c;
}

ClaimSpec ratio_claim(std::int64_t max) {
  ClaimSpec c = better_claim(max);
  c.name = "a-at-most-b";
  c.statement = "A takes no longer than B";
  c.kind = ClaimKind::Ratio;
  c.metric = kRatioFigure;
  c.at_most = 1.0;
  return c;
}

// The runs of one simulated study: model a and b at every seed, accuracy a = Δ, b = 0.
std::vector<RunRecord> study_runs(std::int64_t max) {
  std::vector<RunRecord> runs;
  for (const char* model : {"a", "b"})
    for (std::int64_t s = 0; s < max; ++s) {
      RunRecord r;
      r.spec = {{"model", {{"name", model}, {"options", nlohmann::json::object()}}},
                {"task", {{"name", "sim"}, {"seq_len", 1}}},
                {"seed_index", s},
                {"device", "cpu"}};
      r.key = run_key_of(r.spec);
      r.metrics["eval_accuracy"] = 0;
      r.metrics[kRatioFigure] = 1;
      runs.push_back(std::move(r));
    }
  return runs;
}

// Naive and fixed: a 95 % t interval of Δ on the first n seeds; +1 above 0, −1 below, 0 neither.
int fixed_n_decision(const std::vector<double>& delta, std::int64_t n) {
  const std::vector<double> head(delta.begin(), delta.begin() + n);
  const stats::TTest t = stats::t_test_one_sample(head, 0.95);
  if (!t.ci) return 0;
  return t.ci->lo > 0 ? 1 : t.ci->hi < 0 ? -1 : 0;
}

}  // namespace

SimCounts simulate_claim(Rule rule, const SequentialSeeds& design, Differences kind, double effect, std::size_t studies,
                         std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::student_t_distribution<double> heavy(3.0);
  const double heavy_scale = 1.0 / std::sqrt(3.0);  // t(3) has variance 3
  const std::vector<ClaimSpec> claims = {better_claim(design.max)};
  std::vector<RunRecord> runs = study_runs(design.max);
  const std::vector<std::int64_t> looks = design.look_seeds();
  SimCounts out;
  std::vector<double> delta(static_cast<std::size_t>(design.max));
  for (std::size_t k = 0; k < studies; ++k) {
    for (auto& d : delta) d = effect + (kind == Differences::Normal ? normal(rng) : heavy(rng) * heavy_scale);
    int decision = 0;
    std::int64_t spent = design.max;
    if (rule == Rule::Sequential) {
      for (std::int64_t s = 0; s < design.max; ++s) runs[static_cast<std::size_t>(s)].metrics["eval_accuracy"] = delta[static_cast<std::size_t>(s)];
      const StudyJudgement j = judge_sequential_study(design, claims, runs, false, ClaimSettings{});
      const ClaimResult& r = j.claims.front();
      decision = r.verdict == Verdict::Supported ? 1 : r.verdict == Verdict::Refuted ? -1 : 0;
      if (decision != 0) spent = r.looks.back().seeds;
    } else if (rule == Rule::NaiveRepeated) {
      for (std::int64_t n : looks) {
        decision = fixed_n_decision(delta, n);
        if (decision != 0) {
          spent = n;
          break;
        }
      }
    } else {
      decision = fixed_n_decision(delta, design.max);
    }
    ++out.studies;
    if (decision > 0) ++out.supported;
    if (decision < 0) ++out.refuted;
    out.seeds += static_cast<double>(spent);
  }
  return out;
}

SimCounts simulate_lognormal_ratio(Rule rule, const SequentialSeeds& design, double sigma, std::size_t studies,
                                   std::uint64_t seed) {
  LRB_CHECK(rule != Rule::NaiveRepeated, "simulate_lognormal_ratio: the sequential judge or the fixed design");
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::vector<ClaimSpec> claims = {ratio_claim(design.max)};
  std::vector<RunRecord> runs = study_runs(design.max);
  const auto max = static_cast<std::size_t>(design.max);
  SimCounts out;
  for (std::size_t k = 0; k < studies; ++k) {
    for (std::size_t s = 0; s < max; ++s) {
      runs[s].metrics[kRatioFigure] = std::exp(sigma * normal(rng));
      runs[max + s].metrics[kRatioFigure] = std::exp(0.05 * normal(rng));
    }
    const ClaimResult r = rule == Rule::Sequential ? judge_sequential_study(design, claims, runs, false, ClaimSettings{}).claims.front()
                                                   : evaluate_claims(claims, runs, ClaimSettings{}).front();
    ++out.studies;
    if (r.verdict == Verdict::Supported) ++out.supported;
    if (r.verdict == Verdict::Refuted) ++out.refuted;
    out.seeds += r.sequential && r.verdict != Verdict::Inconclusive ? static_cast<double>(r.looks.back().seeds) : static_cast<double>(max);
  }
  return out;
}

std::pair<double, double> clopper_pearson(std::size_t k, std::size_t n, double confidence) {
  const double a = (1.0 - confidence) / 2.0;
  const double lo = k == 0 ? 0.0 : boost::math::ibeta_inv(static_cast<double>(k), static_cast<double>(n - k + 1), a);
  const double hi = k == n ? 1.0 : boost::math::ibeta_inv(static_cast<double>(k + 1), static_cast<double>(n - k), 1.0 - a);
  return {lo, hi};
}

}  // namespace lrb::test
