#pragma once
// Group-sequential boundaries: how a study may look at its results after every wave of
// seeds and stop as soon as a claim is decided, yet keep its two-sided error rate at α.
//
// The error is spent over the looks by the α-spending function of Lan & DeMets (1983,
// Biometrika 70:659-663) with the O'Brien–Fleming shape, α/2 on each side:
//     α(t) = 2 · (2 − 2·Φ(z_{1−α/4} / √t)),      t = information fraction (seeds so far / max),
// which spends almost nothing at the early looks and nearly all of α at the last. The
// boundary c_k of look k is the |Z| whose crossing probability under H0, given that no
// earlier look crossed, spends α(t_k) − α(t_{k−1}); it is found by the recursive numerical
// integration of Armitage, McPherson & Rowe (1969), as in Jennison & Turnbull, "Group
// Sequential Methods with Applications to Clinical Trials" (2000), chapter 19. Looks need
// not be planned: the boundary of a look depends only on the fractions up to it.
//
// A look's boundary read as a two-sided nominal level p_k = 2·(1 − Φ(c_k)) gives its
// repeated confidence interval (Jennison & Turnbull 1989, JRSS B 51:305-361): the interval
// at confidence 1 − p_k covers the truth at every look at once with probability 1 − α, so a
// decision taken when it excludes a threshold keeps its error rate whenever and for
// whatever reason the study stops. With an estimated variance, the level is applied to
// Student's t with the look's degrees of freedom (Jennison & Turnbull 2000, §3.8).
#include <cstddef>
#include <vector>

namespace lrb::stats {

// α(t) of the O'Brien–Fleming-shaped spending function for a two-sided α (both sides), t in [0, 1].
double obrien_fleming_spending(double alpha, double t);

struct SpendingBoundary {
  std::vector<double> fractions;  // t_k, increasing, in (0, 1]
  std::vector<double> spent;      // α(t_k): cumulative two-sided error spent by look k
  std::vector<double> z;          // c_k: reject at look k when |Z_k| ≥ c_k
  std::vector<double> nominal;    // p_k = 2·(1 − Φ(c_k)): the look's two-sided nominal level
};

// Two-sided symmetric boundaries for looks at increasing fractions (the last may be 1:
// that look spends whatever is left of α). Fractions must lie in (0, 1] and increase.
SpendingBoundary obrien_fleming_boundary(const std::vector<double>& fractions, double alpha);

// The same, one look at a time: a look's boundary depends only on the looks before it, so a
// study judged again after one more look extends what it had (copy a builder to branch).
class SpendingBoundaryBuilder {
 public:
  // `node_spacing`: of the numerical integration in z; finer is needed (and taken, redoing
  // the looks so far) when a look adds little information to the ones before.
  explicit SpendingBoundaryBuilder(double alpha, double node_spacing = 0.05);
  void add(double fraction);  // after the last fraction, at most 1
  const SpendingBoundary& boundary() const { return b_; }

 private:
  void add_look(double fraction);
  double alpha_, h_;
  SpendingBoundary b_;
  std::vector<double> region_z_, region_mass_;  // the sub-density of Z where no look has crossed yet
};

// What a design does under a true drift: the statistic at look k is Z_k ~ N(drift·√I_k, 1)
// with independent increments of the score (information I_k, e.g. the seeds at look k and
// drift the standardised effect per seed). Crossing probabilities at each look, above +c_k
// and below −c_k, given no earlier crossing.
struct SequentialCrossings {
  std::vector<double> upper, lower;  // per look
  double power_upper = 0, power_lower = 0;  // summed over the looks
};
SequentialCrossings sequential_crossings(const std::vector<double>& information, const std::vector<double>& z,
                                         double drift);

// The estimate of a study's drift that is median-unbiased given the look it stopped at
// (`stop`, 0-based), with statistic z_observed there, the looks before it having had
// boundaries |z| (drift and information as for sequential_crossings). A claim decided early
// was decided because its noise ran with the effect, so the estimate read at its deciding
// look is too large (at a true 0.3 sd a seed, four looks of 5 seeds: about 2.5 times). This
// is the drift at which, among the studies that stop at that look the same way (by crossing
// on the same side; at the last look: by reaching it), half read a larger Z: the
// conditional median-unbiased estimate (Jennison & Turnbull 2000, §8.5; Troendle & Yu 1999).
// NaN where no drift can be found (an outcome so far beyond the boundary that the
// probabilities underflow).
double median_unbiased_drift(const std::vector<double>& information, const std::vector<double>& z, std::size_t stop,
                             double z_observed);

// The critical |t| of a two-sided level p on df degrees of freedom, for levels far below
// what 1 − p can hold in a double (p = 1e-20 gives a finite value).
double t_critical_two_sided(double level, double df);

}  // namespace lrb::stats
