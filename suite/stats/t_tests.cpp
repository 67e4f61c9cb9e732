#include "suite/stats/t_tests.h"

#include <boost/math/distributions/students_t.hpp>

#include <cmath>

#include "suite/core/errors.h"

namespace lrb::stats {

double t_two_sided_p(double t, double df) {
  LRB_CHECK(df > 0.0 && !std::isnan(t), "t_two_sided_p needs df > 0 and a t that is a number");
  if (std::isinf(t)) return 0.0;  // the test's limit: boost's cdf refuses an infinite argument
  const boost::math::students_t_distribution<double> dist(df);
  return std::min(1.0, 2.0 * boost::math::cdf(boost::math::complement(dist, std::fabs(t))));
}

double t_critical(double confidence, double df) {
  LRB_CHECK(confidence > 0.0 && confidence < 1.0, "confidence outside (0, 1)");
  LRB_CHECK(df > 0.0, "t_critical needs df > 0");
  const boost::math::students_t_distribution<double> dist(df);
  return boost::math::quantile(dist, 0.5 + confidence / 2.0);
}

namespace {

// Shared tail of both tests once estimate, standard error and df are known.
void finish(TTest& r, double se, std::optional<double> df) {
  const double est = *r.estimate;
  r.std_error = se;
  r.df = df;
  if (se == 0.0) {
    r.p_value = est == 0.0 ? 1.0 : 0.0;
    r.ci = Interval{est, est};
    return;
  }
  LRB_CHECK(df.has_value(), "t-test: nonzero standard error without df");
  // Values near the largest double overflow their mean or spread: no test, no interval (the
  // caller says the result is undefined), rather than a p-value from inf / inf.
  if (!std::isfinite(est) || !std::isfinite(se)) return;
  const double t = est / se;
  r.statistic = t;
  r.p_value = t_two_sided_p(t, *df);
  const double h = t_critical(r.confidence, *df) * se;
  r.ci = Interval{est - h, est + h};
}

}  // namespace

TTest t_test_one_sample(const std::vector<double>& x, double confidence) {
  TTest r;
  r.confidence = confidence;
  r.n = x.size();
  if (x.empty()) return r;
  r.estimate = mean(x);
  if (x.size() < 2) return r;
  const double n = static_cast<double>(x.size());
  finish(r, sample_std(x) / std::sqrt(n), n - 1.0);
  return r;
}

TTest t_test_welch(const std::vector<double>& a, const std::vector<double>& b, double confidence) {
  TTest r;
  r.confidence = confidence;
  r.n = a.size() + b.size();
  if (a.empty() || b.empty()) return r;
  r.estimate = mean(a) - mean(b);
  if (a.size() < 2 || b.size() < 2) return r;
  const double na = static_cast<double>(a.size());
  const double nb = static_cast<double>(b.size());
  const double va = sample_variance(a) / na;
  const double vb = sample_variance(b) / nb;
  const double se2 = va + vb;
  std::optional<double> df;
  if (se2 > 0.0) df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
  finish(r, std::sqrt(se2), df);
  return r;
}

}  // namespace lrb::stats
