// A task's spread table: each cell's values over seeds beyond the mean.
#include "suite/report/task_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "suite/core/text.h"
#include "suite/report/report_tables.h"
#include "suite/report/table_cells.h"
#include "suite/report/text_format.h"

namespace lrb::task_tables {

using namespace table_cells;

Table spread_table(const Analysis& a, const TaskResult& t) {
  const std::string m = display_metric(t.metric);
  Table tab;
  tab.id = "spread-" + slug(t.task);
  tab.task = t.task;
  tab.title = fmt::format("{} — {} over seeds: spread", t.task, m);
  tab.columns = {"model", "setting", "sem", "95% CI (percentile)", "median", "IQR", "IQM", "min", "max", "n"};
  bool any_caution = false;
  for (std::size_t u : t.units)
    for (std::size_t i : a.units[u].cells) {
      const CellResult& c = a.cells[i];
      const auto& s = c.summary;
      std::vector<TableCell> row;
      row.push_back(text(c.cell.entrant));
      row.push_back(text(c.cell.condition_label.empty() ? "-" : c.cell.condition_label));
      row.push_back(value(s.sem, s.n));
      const bool caution = s.n >= 2 && s.n < kMinBootstrapN;
      any_caution = any_caution || caution;
      row.push_back(s.n == 0 ? text("–") : interval(s.bootstrap.percentile, s.n, caution));
      for (const auto& v : {s.median, s.iqr, s.iqm, s.min, s.max}) row.push_back(v ? number(*v, format_value(*v)) : text("–"));
      row.push_back(count(s.n));
      tab.rows.push_back(std::move(row));
      tab.row_keys.push_back(cell_key(i));
    }
  tab.notes.push_back(fmt::format(
      "sem: standard error of the mean; 95% CI (percentile): bootstrap percentile interval of the mean ({}); median, IQR "
      "(q3 − q1, linear quantiles), IQM (mean of the middle 50 %), min and max over the seeds' values",
      bootstrap_note(a.options.bootstrap)));
  if (any_caution)
    tab.notes.push_back(fmt::format("{} n < {}: the bootstrap interval undercovers; read the t interval", kCautionMark, kMinBootstrapN));
  return tab;
}

}  // namespace lrb::task_tables
