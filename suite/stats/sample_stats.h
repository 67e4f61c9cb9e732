#pragma once
// Descriptive building blocks with NumPy/SciPy semantics, so that tables agree with the
// reference implementations the fixtures are computed with:
//   quantile: numpy's default "linear" method (Hyndman & Fan type 7);
//   median: numpy's (mean of the two middle values for even n);
//   trim_mean: scipy.stats.trim_mean (cut int(p*n) values from each end);
//   rank_average: scipy.stats.rankdata(method="average").
#include <cstddef>
#include <vector>

namespace lrb::stats {

// A closed interval [lo, hi]; every interval in lrb::stats uses it.
struct Interval {
  double lo = 0.0;
  double hi = 0.0;
};

// All of these need a non-empty input (an invariant: callers handle n = 0 themselves).
double mean(const std::vector<double>& x);
// Sample variance and standard deviation (ddof = 1); need n >= 2.
double sample_variance(const std::vector<double>& x);
double sample_std(const std::vector<double>& x);

// Quantile q in [0, 1] of an ascending-sorted sample, numpy's "linear" method.
double quantile_sorted(const std::vector<double>& sorted, double q);
// Same, sorting a copy.
double quantile(std::vector<double> x, double q);
double median(std::vector<double> x);
// Mean after cutting int(proportion * n) values from each end of the sorted sample;
// trim_mean(x, 0.25) is the interquartile mean (IQM). proportion in [0, 0.5).
double trim_mean(std::vector<double> x, double proportion);

// 1-based ranks, ties get the average of the ranks they span.
std::vector<double> rank_average(const std::vector<double>& x);

}  // namespace lrb::stats
