#pragma once
// The tables of an Analysis, for people: what `lrbench report` and `lrbench leaderboard`
// print. Every sink that shows tables (terminal, Markdown, LaTeX, HTML) renders these.
#include <vector>

#include "suite/report/analysis.h"
#include "suite/report/table.h"

namespace lrb {

// Per task: summary (mean ± std, t and BCa intervals, tie-group rank, n, failed, stopped),
// spread over seeds (sem, percentile interval, median, IQR, IQM, min, max), paired
// comparisons, efficiency (when recorded), scaling fits (when 3+ sequence lengths).
std::vector<Table> report_tables(const Analysis& a);

// Per (task, setting): tie groups; then mean rank and normalised IQM across them.
std::vector<Table> leaderboard_tables(const Analysis& a);

const char* correction_label(stats::Correction c);  // "Holm", "Benjamini–Hochberg", "none"

}  // namespace lrb
