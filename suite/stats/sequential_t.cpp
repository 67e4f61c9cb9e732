#include "suite/stats/sequential_t.h"

#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <string>

#include "suite/core/errors.h"
#include "suite/stats/group_sequential.h"
#include "suite/stats/normal_draws.h"

namespace lrb::stats {

namespace {

constexpr std::size_t kStudies = std::size_t{1} << 20;
constexpr std::uint64_t kSeed = 0x6c72622d73657174;  // fixed: every process places the same boundaries
// A look that spends fewer simulated crossings than this is placed by Student's tail instead.
constexpr double kFewestCrossings = 200;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Null studies (mean 0, sd 1) looked at after each size so far: per study its running mean
// and sum of squared deviations, and |t| at every look. Look k's draws follow look k−1's,
// so a sequence's boundaries never depend on the looks after it.
struct NullStudies {
  std::vector<std::size_t> sizes;
  std::vector<std::vector<float>> abs_t;
  std::vector<double> mean = std::vector<double>(kStudies, 0.0), squares = std::vector<double>(kStudies, 0.0);
  Normals draws{kSeed};

  void add_look(std::size_t n) {
    const std::size_t before = sizes.empty() ? 0 : sizes.back();
    std::vector<float> t(kStudies, 0.0f);
    const double m = static_cast<double>(n - before), nb = static_cast<double>(before), nn = static_cast<double>(n);
    for (std::size_t i = 0; i < kStudies; ++i) {
      if (n > before) {
        // The batch's mean and its spread about it are independent: N(0, 1/m) and χ² on m − 1.
        const double batch_mean = draws.next() / std::sqrt(m);
        const double within = n - before >= 2 ? draws.chi_square(m - 1.0) : 0.0;
        const double d = batch_mean - mean[i];
        mean[i] += d * m / nn;
        squares[i] += within + d * d * nb * m / nn;
      }
      if (n >= 2 && squares[i] > 0) t[i] = static_cast<float>(std::fabs(mean[i]) * std::sqrt(nn * (nn - 1.0) / squares[i]));
    }
    sizes.push_back(n);
    abs_t.push_back(std::move(t));
  }
};

double two_sided_tail(double t, double df) {
  return 2.0 * boost::math::cdf(boost::math::complement(boost::math::students_t_distribution<double>(df), t));
}

// The |t| at which Student's tail less the share of earlier crossers above it is `spend`:
// for looks that spend too little for the studies to place.
double placed_by_tail(const std::vector<float>& earlier_above_sorted, double spend, double df) {
  auto earlier_share = [&](double c) {
    const auto above = earlier_above_sorted.end() - std::lower_bound(earlier_above_sorted.begin(), earlier_above_sorted.end(), static_cast<float>(c));
    return static_cast<double>(above) / static_cast<double>(kStudies);
  };
  double lo = 0.0, hi = t_critical_two_sided(spend, df);
  for (int it = 0; it < 200 && hi - lo > 1e-10 * std::max(1.0, hi); ++it) {
    const double mid = 0.5 * (lo + hi);
    (two_sided_tail(mid, df) - earlier_share(mid) > spend ? lo : hi) = mid;
  }
  return hi;
}

SequentialTBoundary place(const NullStudies& studies, const std::vector<std::size_t>& sizes, const std::vector<double>& spent) {
  SequentialTBoundary out;
  std::vector<char> crossed(kStudies, 0);
  std::size_t crossed_count = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const double df = static_cast<double>(sizes[k]) - 1.0;
    const double spend = spent[k] - (k ? spent[k - 1] : 0.0);
    const std::vector<float>& t = studies.abs_t[k];
    double c = kInf;
    if (spend > 0 && (k == 0 || spend * static_cast<double>(kStudies) < kFewestCrossings)) {
      std::vector<float> earlier;
      for (std::size_t i = 0; i < kStudies; ++i)
        if (crossed[i]) earlier.push_back(t[i]);
      std::sort(earlier.begin(), earlier.end());
      c = placed_by_tail(earlier, std::min(spend, 0.999999), df);
    } else if (spend > 0) {
      // The boundary that leaves the cumulative share of crossings at what is spent.
      const auto target = static_cast<std::ptrdiff_t>(std::llround(spent[k] * static_cast<double>(kStudies))) -
                          static_cast<std::ptrdiff_t>(crossed_count);
      std::vector<float> alive;
      alive.reserve(kStudies - crossed_count);
      for (std::size_t i = 0; i < kStudies; ++i)
        if (!crossed[i]) alive.push_back(t[i]);
      if (target > 0 && static_cast<std::size_t>(target) <= alive.size()) {
        std::nth_element(alive.begin(), alive.begin() + (target - 1), alive.end(), std::greater<float>());
        c = alive[static_cast<std::size_t>(target - 1)];
      } else if (target > 0) {
        c = 0.0;
      }
    }
    for (std::size_t i = 0; i < kStudies; ++i)
      if (!crossed[i] && t[i] >= c) {
        crossed[i] = 1;
        ++crossed_count;
      }
    out.t.push_back(c);
    out.nominal.push_back(std::isfinite(c) ? two_sided_tail(c, df) : 0.0);
  }
  return out;
}

bool is_prefix(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {  // a of b
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace

SequentialTBoundary sequential_t_boundary(const std::vector<std::size_t>& sizes, const std::vector<double>& spent) {
  LRB_CHECK(!sizes.empty() && sizes.size() == spent.size(), "sequential_t_boundary: one spent level per look");
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    LRB_CHECK(sizes[k] >= 2 && (k == 0 || sizes[k] >= sizes[k - 1]), "sequential_t_boundary: sizes must be ≥ 2 and not decrease");
    LRB_CHECK(spent[k] >= 0 && spent[k] < 1 && (k == 0 || spent[k] >= spent[k - 1]), "sequential_t_boundary: spent must lie in [0, 1) and not decrease");
  }
  static std::mutex mutex;
  static std::deque<NullStudies> simulated;  // the latest two sequences of sizes (20 MB + 4 MB a look each)
  static std::map<std::string, SequentialTBoundary> placed;
  std::string key(sizes.size() * (sizeof(std::size_t) + sizeof(double)), '\0');
  std::memcpy(key.data(), sizes.data(), sizes.size() * sizeof(std::size_t));
  std::memcpy(key.data() + sizes.size() * sizeof(std::size_t), spent.data(), spent.size() * sizeof(double));
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = placed.find(key); it != placed.end()) return it->second;
  auto it = std::find_if(simulated.begin(), simulated.end(), [&](const NullStudies& s) { return is_prefix(sizes, s.sizes); });
  if (it == simulated.end()) {
    it = std::find_if(simulated.begin(), simulated.end(), [&](const NullStudies& s) { return is_prefix(s.sizes, sizes); });
    if (it == simulated.end()) {
      if (simulated.size() >= 2) simulated.pop_front();
      simulated.emplace_back();
      it = simulated.end() - 1;
    }
    while (it->sizes.size() < sizes.size()) it->add_look(sizes[it->sizes.size()]);
  }
  if (placed.size() > 20000) placed.clear();
  return placed.emplace(key, place(*it, sizes, spent)).first->second;
}

}  // namespace lrb::stats
