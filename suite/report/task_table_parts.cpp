// The cells and notes the task tables and the leaderboard share.
#include "suite/report/task_tables.h"

#include <fmt/format.h>

#include "suite/config/run_streams.h"
#include "suite/report/report_tables.h"
#include "suite/report/table_cells.h"
#include "suite/report/text_format.h"

namespace lrb::task_tables {

using namespace table_cells;

TableCell value(const std::optional<double>& v, std::size_t n) {
  if (v) return number(*v, format_value(*v));
  return text(n == 1 ? "n=1" : "–");
}
TableCell p_value(const std::optional<double>& p, std::size_t n) {
  if (!p) return text(n == 1 ? "n=1" : "–");
  return number(*p, format_p(*p));
}

std::string rank_text(const CellResult& c, const Unit& u, const std::vector<CellResult>& cells) {
  if (!c.rank) return "–";
  std::size_t members = 0;
  for (std::size_t i : u.cells)
    if (cells[i].rank && cells[i].rank->group == c.rank->group) ++members;
  return std::to_string(c.rank->group_rank) + (members > 1 ? "=" : "");
}

TableCell mean_std(const CellResult& c) {
  const auto& s = c.summary;
  if (s.n == 0) {
    TableCell t = text("no result");
    t.alert = true;
    return t;
  }
  if (s.n == 1) return number(*s.mean, format_value(*s.mean));
  return number(*s.mean, format_value(*s.mean) + " ± " + format_value(*s.std));
}

std::string bootstrap_note(const stats::BootstrapSettings& b) {
  return fmt::format("{} resamples, seed {}", b.resamples, b.seed);
}

std::string ranking_rule(const ReportOptions& o) {
  return fmt::format("rank: tie groups — models not significantly worse than their group's leader (paired t-test by seed, "
                     "{}-adjusted, α = {}) share its rank; \"1=\" marks a shared rank, \"–\" no result to rank",
                     correction_label(o.correction), o.alpha);
}

std::string problem_note(const Cell& c, const RunProblem& p) {
  return c.entrant + (c.condition_label.empty() ? "" : " " + c.condition_label) + ", " + replicate_label(p.seed) + " " +
         p.status + ": " + (p.reason.empty() ? "(no reason recorded)" : p.reason);
}

}  // namespace lrb::task_tables
