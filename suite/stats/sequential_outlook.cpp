#include "suite/stats/sequential_outlook.h"

#include <algorithm>
#include <cmath>

#include "suite/core/errors.h"
#include "suite/stats/group_sequential.h"
#include "suite/stats/normal_draws.h"

namespace lrb::stats {

namespace {

// Simulated draws in all, whatever the design's size: about 20,000 studies of 60 seeds.
constexpr double kDrawBudget = 1.2e6;
constexpr std::size_t kMinStudies = 2000, kMaxStudies = 20000;

}  // namespace

SequentialOutlook sequential_outlook(const std::vector<double>& observed, const std::vector<std::int64_t>& look_seeds,
                                     const std::vector<double>& nominal, bool from_start, std::uint64_t seed) {
  LRB_CHECK(observed.size() >= 2, "sequential_outlook: needs 2 observed seeds");
  LRB_CHECK(!look_seeds.empty() && look_seeds.size() == nominal.size(), "sequential_outlook: one level per look");
  double sum = 0, sumsq = 0;
  for (double v : observed) sum += v;
  const double n0 = static_cast<double>(observed.size());
  const double mean = sum / n0;
  for (double v : observed) sumsq += (v - mean) * (v - mean);
  const double sd = std::sqrt(sumsq / (n0 - 1));
  LRB_CHECK(sd > 0, "sequential_outlook: the observed seeds have no spread");
  const std::int64_t max = look_seeds.back();
  // Where the study stands: the looks it has made (up to its seeds) are behind it.
  const std::int64_t done = from_start ? 0 : static_cast<std::int64_t>(observed.size());
  std::size_t first_look = 0;
  while (first_look < look_seeds.size() && look_seeds[first_look] <= done) ++first_look;
  std::vector<double> critical(look_seeds.size(), INFINITY);
  for (std::size_t k = first_look; k < look_seeds.size(); ++k)
    if (look_seeds[k] >= 2 && nominal[k] > 0 && nominal[k] < 1)
      critical[k] = t_critical_two_sided(nominal[k], static_cast<double>(look_seeds[k] - 1));
  if (first_look == look_seeds.size()) return {static_cast<double>(std::max(done, max)), 0.0, 0.0};

  const std::size_t studies = std::clamp<std::size_t>(
      static_cast<std::size_t>(kDrawBudget / static_cast<double>(std::max<std::int64_t>(1, max - done))), kMinStudies, kMaxStudies);
  Normals normal(seed);
  double seeds_total = 0, toward = 0, decided = 0;
  for (std::size_t s = 0; s < studies; ++s) {
    // Welford's running mean and sum of squares over the study's seeds.
    double m = 0, m2 = 0;
    std::int64_t n = 0;
    auto add = [&](double v) {
      ++n;
      const double d = v - m;
      m += d / static_cast<double>(n);
      m2 += d * (v - m);
    };
    if (!from_start)
      for (double v : observed) add(v);
    std::int64_t stopped_at = max;
    for (std::size_t k = first_look; k < look_seeds.size(); ++k) {
      while (n < look_seeds[k]) add(mean + sd * normal.next());
      if (n < 2 || !(m2 > 0)) continue;
      const double t = m / std::sqrt(m2 / static_cast<double>(n - 1) / static_cast<double>(n));
      if (std::fabs(t) >= critical[k]) {
        stopped_at = look_seeds[k];
        decided += 1;
        if ((t > 0) == (mean > 0)) toward += 1;
        break;
      }
    }
    seeds_total += static_cast<double>(stopped_at);
  }
  const double count = static_cast<double>(studies);
  return {seeds_total / count, toward / count, decided / count};
}

}  // namespace lrb::stats
