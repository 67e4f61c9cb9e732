#include "suite/stats/scaling_fit.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "suite/core/errors.h"
#include "suite/stats/t_tests.h"

namespace lrb::stats {

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y, double confidence) {
  if (x.size() != y.size()) throw UserError("line fit: x and y have different lengths");
  if (x.size() < 2) throw UserError("line fit needs at least 2 points, got " + std::to_string(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) throw UserError("line fit: non-finite point");
  }
  LineFit f;
  f.n = x.size();
  f.confidence = confidence;
  const double mx = mean(x);
  const double my = mean(y);
  double sxx = 0.0, sxy = 0.0, syy = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0.0) throw UserError("line fit needs at least two distinct x values");
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  f.r_squared = syy == 0.0 ? 0.0 : std::min(1.0, sxy * sxy / (sxx * syy));
  if (f.n >= 3) {
    // Residual form of linregress's sqrt((1 - r²)·Syy / Sxx / df): same value, but it keeps
    // its digits for near-perfect fits where 1 - r² cancels.
    double sse = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double e = y[i] - (f.intercept + f.slope * x[i]);
      sse += e * e;
    }
    const double df = static_cast<double>(f.n - 2);
    const double se = std::sqrt(sse / df / sxx);
    f.slope_stderr = se;
    const double h = t_critical(confidence, df) * se;
    f.slope_ci = Interval{f.slope - h, f.slope + h};
  }
  return f;
}

LineFit fit_power_law(const std::vector<double>& x, const std::vector<double>& y, double confidence) {
  if (x.size() != y.size()) throw UserError("power-law fit: x and y have different lengths");
  std::vector<double> lx(x.size()), ly(y.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0.0) || !(y[i] > 0.0)) {
      throw UserError("power-law fit needs positive x and y; point " + std::to_string(i) + " is (" +
                      std::to_string(x[i]) + ", " + std::to_string(y[i]) + ")");
    }
    lx[i] = std::log(x[i]);
    ly[i] = std::log(y[i]);
  }
  return fit_line(lx, ly, confidence);
}

}  // namespace lrb::stats
