#pragma once
// Adjusted p-values for a family of comparisons, identical to statsmodels'
// multipletests(method="holm") (family-wise error) and method="fdr_bh" (false discovery
// rate). Reports say which adjustment a column shows.
#include <optional>
#include <vector>

namespace lrb::stats {

enum class Correction { kNone, kHolm, kBenjaminiHochberg };

// Same order as the input; p-values must lie in [0, 1].
std::vector<double> holm(const std::vector<double>& p);
std::vector<double> benjamini_hochberg(const std::vector<double>& p);
std::vector<double> adjust(const std::vector<double>& p, Correction correction);

// For a table's column where some p-values are undefined: the family is the defined ones,
// undefined stay undefined.
std::vector<std::optional<double>> adjust(const std::vector<std::optional<double>>& p, Correction correction);

const char* correction_name(Correction correction);  // "none", "holm", "fdr_bh"

}  // namespace lrb::stats
