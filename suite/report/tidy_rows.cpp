#include "suite/report/tidy_rows.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "suite/config/run_streams.h"
#include "suite/config/setting_values.h"
#include "suite/contracts/figures.h"
#include "suite/report/escape.h"
#include "suite/store/run_view.h"

namespace lrb {

namespace {

using json = nlohmann::json;

// One cell: a JSON value, null where the row has none.
struct Cell {
  std::string column;
  json value;
};

const char* const kFigureColumns[] = {"figure", "value", "unit", "direction"};
// The provenance that tells two runs' circumstances apart (what the results index keeps).
const char* const kProvenanceColumns[] = {"git_revision", "git_dirty", "device_name", "gpu_name", "threads", "world_size"};

// Settings grouped the way a sweep file is written: task, model, train, then the rest.
int setting_group(const std::string& path) {
  static const char* const order[] = {"task.", "model.", "train.", "measure.", "evaluate."};
  for (int i = 0; i < 5; ++i)
    if (path.rfind(order[i], 0) == 0) return i;
  return 5;
}
bool setting_before(const std::string& a, const std::string& b) {
  const int ga = setting_group(a), gb = setting_group(b);
  if (ga != gb) return ga < gb;
  // seq_len first among the task's settings: it is what every study varies.
  if ((a == "task.seq_len") != (b == "task.seq_len")) return a == "task.seq_len";
  return a < b;
}

json field_or_null(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? json() : *it;
}

// A figure's unit and better side: the catalogue's (which has learnt what run files
// recorded), else what this record holds, else nothing.
std::pair<std::string, std::string> unit_and_direction(const RunRecord& run, const std::string& figure) {
  if (const FigureDef* def = find_figure(figure)) return {unit_name(def->unit), direction_name(def->direction)};
  const auto it = run.figures.find(figure);
  if (it != run.figures.end()) return {it->second.unit, it->second.direction};
  return {"", ""};
}

std::vector<Cell> run_cells(const RunRecord& run) {
  const RunView& v = run.view();
  const auto text_or_null = [](const std::string& s) { return s.empty() ? json() : json(s); };
  const auto or_null = [](const auto& o) { return o ? json(*o) : json(); };
  std::vector<Cell> cells = {{"run_key", run.key},
                             {"sweep", field_or_null(run.provenance, "sweep")},
                             {"status", status_name(run.status)},
                             {"error", run.error.empty() ? json() : json(run.error)},
                             {"task", text_or_null(v.task)},
                             {"model", text_or_null(v.model)},
                             {"seed", or_null(v.seed_index)}};
  // The index each random stream drew at: the seed's unless [sweep] vary or fixed named it.
  for (std::size_t k = 0; k < kStreams.size(); ++k)
    cells.push_back({"stream." + std::string(kStreams[k].name), v.streams ? json((*v.streams)[k]) : json()});
  cells.push_back({"base_seed", or_null(v.base_seed)});
  cells.push_back({"device", v.readable ? json(v.device) : json()});
  cells.push_back({"ranks_per_run", v.readable ? json(v.ranks_per_run) : json()});  // absent from a spec at 1
  return cells;
}

std::vector<Cell> provenance_cells(const RunRecord* run) {
  std::vector<Cell> cells;
  for (const char* c : kProvenanceColumns) {
    if (!run) cells.push_back({c, nullptr});
    else if (std::string_view(c) == "gpu_name") cells.push_back({c, run->gpu_name().empty() ? json() : json(run->gpu_name())});
    else cells.push_back({c, field_or_null(run->provenance, c)});
  }
  return cells;
}

std::map<std::string, json> settings_of(const RunRecord& run) {
  const json& spec = run.spec;
  if (!run.view().has_settings) return {};
  return setting_values(spec);
}

// A value as CSV text: strings as they are, numbers in their shortest exact form (a
// non-finite one as nan, inf, -inf, which pandas reads as floats), arrays and objects as
// JSON, null as an empty field.
std::string csv_text(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "";
    case json::value_t::string: return csv_field(v.get_ref<const std::string&>());
    case json::value_t::number_float: return fmt::format("{}", v.get<double>());
    case json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return v.dump();
    default: return csv_field(v.dump());
  }
}
// JSON has no NaN or infinity: a non-finite value is null.
std::string json_text(const json& v) {
  if (v.is_number_float() && !std::isfinite(v.get<double>())) return "null";
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Writes rows of one format: the run's cells, the figure's, the provenance's.
class RowWriter {
 public:
  RowWriter(TidyFormat format, std::vector<std::string> settings, std::ostream& out)
      : format_(format), settings_(std::move(settings)), out_(out) {}

  void header() {
    if (format_ != TidyFormat::Csv) return;
    std::string line;
    auto add = [&line](const std::string& c) { line += (line.empty() ? "" : ",") + csv_field(c); };
    for (const auto& c : run_cells(RunRecord{})) add(c.column);
    for (const auto& s : settings_) add(s);
    for (const char* c : kFigureColumns) add(c);
    for (const char* c : kProvenanceColumns) add(c);
    out_ << line << '\n';
  }

  // The part of a row every figure of one run shares: before and after the figure's cells.
  void begin_run(const std::vector<Cell>& run, const std::map<std::string, json>& settings,
                 const std::vector<Cell>& provenance) {
    before_ = Cells{};
    after_ = Cells{};
    for (const auto& c : run) append(before_, c.column, c.value);
    for (const auto& path : settings_) {
      const auto it = settings.find(path);
      if (format_ == TidyFormat::Csv || it != settings.end()) append(before_, path, it == settings.end() ? json() : it->second);
    }
    for (const auto& c : provenance) append(after_, c.column, c.value);
  }

  void row(const json& figure, const json& value, const std::string& unit, const std::string& direction) {
    Cells cells;
    const json values[] = {figure, value, figure.is_null() ? json() : json(unit),
                           figure.is_null() ? json() : json(direction)};
    for (std::size_t i = 0; i < 4; ++i) append(cells, kFigureColumns[i], values[i]);
    if (format_ == TidyFormat::Csv)
      out_ << before_.text << ',' << cells.text << ',' << after_.text << '\n';
    else
      out_ << '{' << before_.text << ',' << cells.text << ',' << after_.text << "}\n";
    ++rows_;
  }

  std::size_t rows() const { return rows_; }

 private:
  // Cells joined by commas: CSV fields, or JSON members.
  struct Cells {
    std::string text;
    std::size_t count = 0;
  };
  void append(Cells& to, const std::string& column, const json& value) {
    if (to.count++ > 0) to.text += ',';
    if (format_ == TidyFormat::Csv) {
      to.text += csv_text(value);
    } else {
      to.text += json(column).dump();
      to.text += ':';
      to.text += json_text(value);
    }
  }

  TidyFormat format_;
  std::vector<std::string> settings_;
  std::ostream& out_;
  Cells before_, after_;
  std::size_t rows_ = 0;
};

}  // namespace

std::optional<TidyFormat> tidy_format_from_name(std::string_view name) {
  if (name == "csv") return TidyFormat::Csv;
  if (name == "jsonl") return TidyFormat::Jsonl;
  return std::nullopt;
}

std::optional<TidyFormat> tidy_format_for_file(const std::string& file) {
  const std::string ext = std::filesystem::path(file).extension().string();
  return ext.size() > 1 ? tidy_format_from_name(std::string_view(ext).substr(1)) : std::nullopt;
}

std::size_t write_tidy_rows(const ReportInput& input, TidyFormat format, std::ostream& out) {
  // The columns first (CSV names them all in its header), each run's settings once.
  std::vector<std::map<std::string, json>> settings;
  settings.reserve(input.runs.size());
  std::set<std::string> paths;
  for (const auto& run : input.runs) {
    settings.push_back(settings_of(run));
    for (const auto& [path, value] : settings.back()) paths.insert(path);
  }
  std::vector<std::string> columns(paths.begin(), paths.end());
  std::sort(columns.begin(), columns.end(), setting_before);

  RowWriter writer(format, columns, out);
  writer.header();
  for (std::size_t i = 0; i < input.runs.size(); ++i) {
    const RunRecord& run = input.runs[i];
    writer.begin_run(run_cells(run), settings[i], provenance_cells(&run));
    for (const auto& [figure, value] : run.metrics) {
      const auto [unit, direction] = unit_and_direction(run, figure);
      writer.row(figure, value, unit, direction);
    }
    if (run.metrics.empty()) writer.row(nullptr, nullptr, "", "");
  }
  // What a report lists beside the runs: each with its reason, never dropped.
  auto note_row = [&writer](const char* status, const std::string& why) {
    std::vector<Cell> cells = run_cells(RunRecord{});
    for (auto& c : cells) c.value = c.column == "status" ? json(status) : c.column == "error" ? json(why) : json();
    writer.begin_run(cells, {}, provenance_cells(nullptr));
    writer.row(nullptr, nullptr, "", "");
  };
  for (const auto& bad : input.bad) note_row("unreadable", bad.file.string() + ": " + bad.reason);
  for (const auto& skipped : input.skipped) note_row("skipped", skipped);
  return writer.rows();
}

}  // namespace lrb
