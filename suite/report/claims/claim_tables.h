#pragma once
// The claims' tables: their verdicts (fixed and sequential designs, a dominates claim's two
// halves), a sequential study's looks, and what settling the open ones would cost (`plan`).
#include <optional>

#include "suite/report/analysis.h"
#include "suite/report/table.h"

namespace lrb {

Table claims_table(const Analysis& a);                     // id "claims"
Table claim_looks_table(const Analysis& a);                // id "claims-looks"
std::optional<Table> claim_plan_table(const Analysis& a);  // id "claims-plan"

}  // namespace lrb
