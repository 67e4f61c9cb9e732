#pragma once
// Simulated draws that are the same on every libstdc++ (std::normal_distribution is not
// specified bit for bit): standard normals by Box–Muller over std::mt19937_64's 53-bit
// uniforms, chi-squares by Marsaglia & Tsang's gamma method (ACM TOMS 26:363-372, 2000).
#include <cmath>
#include <cstdint>
#include <random>

namespace lrb::stats {

class Normals {
 public:
  explicit Normals(std::uint64_t seed) : bits_(seed) {}
  double next() {
    if (spare_) {
      spare_ = false;
      return second_;
    }
    const double u1 = uniform(), u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    second_ = r * std::sin(2.0 * M_PI * u2);
    spare_ = true;
    return r * std::cos(2.0 * M_PI * u2);
  }
  double uniform() { return (static_cast<double>(bits_() >> 11) + 0.5) * 0x1.0p-53; }  // in (0, 1)
  // χ² on df > 0 degrees of freedom: twice a Gamma(df / 2) draw.
  double chi_square(double df) {
    const double shape = df / 2.0;
    if (shape < 1.0) return 2.0 * gamma(shape + 1.0) * std::pow(uniform(), 1.0 / shape);  // (their §6)
    return 2.0 * gamma(shape);
  }

 private:
  double gamma(double shape) {  // shape ≥ 1
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      const double x = next(), v0 = 1.0 + c * x;
      if (v0 <= 0) continue;
      const double v = v0 * v0 * v0;
      if (std::log(uniform()) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
  }
  std::mt19937_64 bits_;
  bool spare_ = false;
  double second_ = 0;
};

}  // namespace lrb::stats
