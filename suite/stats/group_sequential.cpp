#include "suite/stats/group_sequential.h"

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "suite/core/errors.h"

namespace lrb::stats {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Beyond this |z| a boundary is never crossed in practice: Φ's tail there is below 1e-300.
constexpr double kNeverCrossed = 37.0;
// The density of Z_k is negligible more than this many standard deviations from its mean.
constexpr double kSupport = 10.0;

double upper_tail(double x) { return 0.5 * std::erfc(x / std::sqrt(2.0)); }  // 1 − Φ(x), accurate far out
double lower_tail(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }  // Φ(x)
double density(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI); }

double normal_upper_quantile(double p) {  // x with 1 − Φ(x) = p
  return boost::math::quantile(boost::math::complement(boost::math::normal_distribution<double>(), p));
}

// The sub-density of Z_k on the region where no look up to k has crossed, held as Simpson
// nodes with their weights folded in: Σ mass[i]·f(z[i]) ≈ ∫ g_k(z) f(z) dz over the region.
struct Continuation {
  std::vector<double> z, mass;
};

// Simpson nodes on [lo, hi], spaced at most `h` apart (an odd count of at least 3).
void simpson_nodes(double lo, double hi, double h, std::vector<double>& z, std::vector<double>& w) {
  z.clear();
  w.clear();
  if (!(hi > lo)) return;
  std::size_t intervals = static_cast<std::size_t>(std::ceil((hi - lo) / h));
  intervals = std::clamp<std::size_t>(intervals + (intervals % 2), 2, 4000);
  const double step = (hi - lo) / static_cast<double>(intervals);
  for (std::size_t i = 0; i <= intervals; ++i) {
    z.push_back(lo + step * static_cast<double>(i));
    const double coef = (i == 0 || i == intervals) ? 1.0 : (i % 2 ? 4.0 : 2.0);
    w.push_back(coef * step / 3.0);
  }
}

// One look of the recursion (Jennison & Turnbull 2000, §19.2). Given the continuation
// sub-density of the previous look (or none for the first), information levels and the
// drift, answers crossing probabilities for a candidate boundary and builds the next
// continuation region.
class Recursion {
 public:
  Recursion(const Continuation* previous, double info_prev, double info, double drift, double spacing)
      : previous_(previous), r_(std::sqrt(info_prev)), s_(std::sqrt(info)), sd_(std::sqrt(info - info_prev)),
        shift_(drift * (info - info_prev)), mean_(drift * std::sqrt(info)), h_(spacing) {}

  // P(Z_k ≥ c, no earlier crossing) and P(Z_k ≤ −c, no earlier crossing).
  std::pair<double, double> crossings(double c) const {
    if (!std::isfinite(c)) return {0.0, 0.0};
    if (!previous_) return {upper_tail(c - mean_), lower_tail(-c - mean_)};
    double up = 0, down = 0;
    for (std::size_t i = 0; i < previous_->z.size(); ++i) {
      const double centre = previous_->z[i] * r_ + shift_;
      up += previous_->mass[i] * upper_tail((c * s_ - centre) / sd_);
      down += previous_->mass[i] * lower_tail((-c * s_ - centre) / sd_);
    }
    return {up, down};
  }

  // The sub-density of Z_k on (−c, c), restricted to where it is not negligible.
  Continuation continuation(double c) const {
    const double lo = std::max(-c, mean_ - kSupport), hi = std::min(c, mean_ + kSupport);
    Continuation next;
    std::vector<double> w;
    simpson_nodes(lo, hi, h_, next.z, w);
    next.mass.resize(next.z.size());
    for (std::size_t j = 0; j < next.z.size(); ++j) {
      double g = 0;
      if (!previous_) {
        g = density(next.z[j] - mean_);
      } else {
        for (std::size_t i = 0; i < previous_->z.size(); ++i)
          g += previous_->mass[i] * density((next.z[j] * s_ - previous_->z[i] * r_ - shift_) / sd_);
        g *= s_ / sd_;
      }
      next.mass[j] = g * w[j];
    }
    return next;
  }

 private:
  const Continuation* previous_;
  double r_, s_, sd_, shift_, mean_, h_;
};

// Node spacing fine enough for every look's kernel: Z_k given Z_{k−1} has sd √(ΔI/I_k) in z
// and √(ΔI/I_{k−1}) in z_{k−1}; Simpson's rule needs several nodes across the narrowest.
double node_spacing(const std::vector<double>& information) {
  double h = 0.05;
  for (std::size_t k = 1; k < information.size(); ++k)
    if (information[k] > information[k - 1])  // (looks that do not advance are refused later)
      h = std::min(h, std::sqrt((information[k] - information[k - 1]) / information[k]) / 5.0);
  return h;
}

// The c with crossings (both sides) equal to `target` under H0; +inf when nothing is spent.
double solve_boundary(const Recursion& look, double target, bool first) {
  if (!(target > 0)) return kInf;
  if (first) return std::min(normal_upper_quantile(target / 2.0), kInf);
  auto total = [&](double c) {
    const auto [u, d] = look.crossings(c);
    return u + d;
  };
  double lo = 0.0, hi = kNeverCrossed;
  if (total(hi) >= target) return hi;
  if (total(lo) <= target) return lo;  // more to spend than the region holds: reject everything left
  for (int it = 0; it < 200 && hi - lo > 1e-12; ++it) {
    const double mid = 0.5 * (lo + hi);
    (total(mid) > target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

double obrien_fleming_spending(double alpha, double t) {
  LRB_CHECK(alpha > 0 && alpha < 1, "obrien_fleming_spending: alpha must lie in (0, 1)");
  if (t <= 0) return 0.0;
  if (t >= 1) return alpha;
  // Each side spends α/2 by the one-sided function 2 − 2Φ(z_{1−α/4}/√t) (the convention of
  // R's gsDesign sfLDOF and ldbounds, whose boundaries the tests compare with).
  return 4.0 * upper_tail(normal_upper_quantile(alpha / 4.0) / std::sqrt(t));
}

SpendingBoundaryBuilder::SpendingBoundaryBuilder(double alpha, double node_spacing) : alpha_(alpha), h_(node_spacing) {
  LRB_CHECK(alpha > 0 && alpha < 1, "obrien_fleming_boundary: alpha must lie in (0, 1)");
  LRB_CHECK(node_spacing > 0, "obrien_fleming_boundary: node spacing must be positive");
}

void SpendingBoundaryBuilder::add(double t) {
  const double previous = b_.fractions.empty() ? 0.0 : b_.fractions.back();
  LRB_CHECK(t > previous && t <= 1.0, "obrien_fleming_boundary: fractions must increase within (0, 1]");
  if (!b_.fractions.empty()) {
    const double needed = std::sqrt((t - previous) / t) / 5.0;
    if (needed < h_) {
      // The new look's kernel is narrower than the nodes resolve: redo every look finer.
      const std::vector<double> before = b_.fractions;
      *this = SpendingBoundaryBuilder(alpha_, needed);
      for (double f : before) add_look(f);
    }
  }
  add_look(t);
}

void SpendingBoundaryBuilder::add_look(double t) {
  const std::size_t k = b_.fractions.size();
  const double previous_t = k ? b_.fractions.back() : 0.0;
  const double previous_spent = k ? b_.spent.back() : 0.0;
  Continuation region{std::move(region_z_), std::move(region_mass_)};
  const double spent = obrien_fleming_spending(alpha_, t);
  const Recursion look(k == 0 ? nullptr : &region, previous_t, t, 0.0, h_);
  const double c = solve_boundary(look, spent - previous_spent, k == 0);
  b_.fractions.push_back(t);
  b_.spent.push_back(spent);
  b_.z.push_back(c);
  b_.nominal.push_back(std::isfinite(c) ? 2.0 * upper_tail(c) : 0.0);
  Continuation next = t < 1.0 ? look.continuation(c) : Continuation{};
  region_z_ = std::move(next.z);
  region_mass_ = std::move(next.mass);
}

SpendingBoundary obrien_fleming_boundary(const std::vector<double>& fractions, double alpha) {
  SpendingBoundaryBuilder b(alpha, node_spacing(fractions));
  for (double t : fractions) b.add(t);
  return b.boundary();
}

SequentialCrossings sequential_crossings(const std::vector<double>& information, const std::vector<double>& z,
                                         double drift) {
  LRB_CHECK(information.size() == z.size(), "sequential_crossings: one boundary per look");
  SequentialCrossings out;
  Continuation region;
  double previous = 0;
  const double h = node_spacing(information);
  for (std::size_t k = 0; k < information.size(); ++k) {
    LRB_CHECK(information[k] > previous, "sequential_crossings: information must increase");
    const Recursion look(k == 0 ? nullptr : &region, previous, information[k], drift, h);
    const auto [up, down] = look.crossings(z[k]);
    out.upper.push_back(up);
    out.lower.push_back(down);
    out.power_upper += up;
    out.power_lower += down;
    if (k + 1 < information.size()) region = look.continuation(z[k]);
    previous = information[k];
  }
  return out;
}

namespace {

// Among the studies at `drift` that stop at look `stop` the way the observed one did (for
// an earlier look than the last: crossing its upper boundary, z_observed ≥ z[stop]; at the
// last: reaching it), the share with Z_stop ≥ z_observed. 0 where none stop so (a drift far
// below: both shares underflow).
double share_above_given_stop(const std::vector<double>& information, const std::vector<double>& z, std::size_t stop,
                              double z_observed, double drift, double h) {
  Continuation region;
  double previous = 0;
  for (std::size_t k = 0;; ++k) {
    const Recursion look(k == 0 ? nullptr : &region, previous, information[k], drift, h);
    if (k == stop) {
      const bool last = stop + 1 == information.size();
      const double way = look.crossings(last ? -kNeverCrossed : z[stop]).first;
      if (!(way > 1e-300)) return 0.0;
      return std::min(1.0, look.crossings(z_observed).first / way);
    }
    region = look.continuation(z[k]);
    previous = information[k];
  }
}

}  // namespace

double median_unbiased_drift(const std::vector<double>& information, const std::vector<double>& z, std::size_t stop,
                             double z_observed) {
  LRB_CHECK(stop < information.size() && stop <= z.size(), "median_unbiased_drift: the stopping look must be a look");
  LRB_CHECK(std::isfinite(z_observed), "median_unbiased_drift: needs a finite statistic");
  for (std::size_t k = 0; k <= stop; ++k)
    LRB_CHECK(information[k] > (k ? information[k - 1] : 0.0), "median_unbiased_drift: information must increase");
  const bool last = stop + 1 == information.size();
  // A crossing of the lower boundary is the mirror image of one of the upper (symmetric boundaries).
  if (!last && z_observed < 0) return -median_unbiased_drift(information, z, stop, -z_observed);
  const double h = node_spacing(std::vector<double>(information.begin(), information.begin() + static_cast<std::ptrdiff_t>(stop) + 1));
  auto share = [&](double drift) { return share_above_given_stop(information, z, stop, z_observed, drift, h); };
  // Increasing in the drift: bracket the root below the estimate read at the stop, then bisect.
  const double read = z_observed / std::sqrt(information[stop]);
  const double step = 1.0 / std::sqrt(information[0]);
  double lo = read - step, hi = read + step;
  for (int i = 0; i < 40 && share(lo) > 0.5; ++i) lo -= step * (1 << std::min(i, 16));
  for (int i = 0; i < 40 && share(hi) < 0.5; ++i) hi += step * (1 << std::min(i, 16));
  // No drift puts half above: the outcome is too far beyond what stopping there allows for
  // the recursion to say (its probability underflows on the way).
  if (!(share(lo) <= 0.5 && share(hi) >= 0.5)) return std::nan("");
  for (int it = 0; it < 100 && hi - lo > 1e-7 * std::max(1.0, std::fabs(read)); ++it) {
    const double mid = 0.5 * (lo + hi);
    (share(mid) < 0.5 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double t_critical_two_sided(double level, double df) {
  LRB_CHECK(level > 0 && level < 1, "t_critical_two_sided: level must lie in (0, 1)");
  LRB_CHECK(df > 0, "t_critical_two_sided: needs df > 0");
  return boost::math::quantile(boost::math::complement(boost::math::students_t_distribution<double>(df), level / 2.0));
}

}  // namespace lrb::stats
