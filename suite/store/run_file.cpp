#include "suite/store/run_file.h"

#include <string_view>
#include <system_error>

#include "suite/config/run_spec.h"
#include "suite/config/run_streams.h"
#include "suite/contracts/figures.h"
#include "suite/core/errors.h"
#include "suite/core/file_digest.h"
#include "suite/core/files.h"
#include "suite/core/sha256.h"
#include "suite/core/version.h"
#include "suite/hdf5/h5.h"
#include "suite/store/results_layout.h"
#include "suite/store/text_dataset.h"

namespace lrb {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Names written in the file; results/SCHEMA.md documents each one.
constexpr const char* kSchemaVersionAttr = "schema_version";
constexpr const char* kRunKeyAttr = "run_key";
constexpr const char* kVersionAttr = "lrbench_version";
constexpr const char* kRevisionAttr = "git_revision";
constexpr const char* kCompleteAttr = "complete";
constexpr const char* kMetricsGroup = "metrics";
constexpr const char* kCurvesGroup = "curves";

// A metric or curve name becomes one HDF5 link name.
bool valid_link_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

// Text that is not valid UTF-8 (an exception message quoting raw bytes) must not stop a
// run from being recorded: dump with replacement characters.
std::string dump_lenient(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Stored strings end at the first NUL (NULLPAD); keep such text whole and checksummable.
std::string without_nul(std::string text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\0')
      out += "\xEF\xBF\xBD";  // U+FFFD
    else
      out += c;
  }
  return out;
}

json parse_json(const std::string& text, const std::string& name) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw BadData("bad JSON in /" + name + ": " + e.what());
  }
}

std::vector<double> read_series(const h5::Object& group, const std::string& group_name, const std::string& name) {
  const std::string where = "/" + group_name + "/" + name;
  h5::Dataset ds = h5::open_dataset(group, name);
  if (!h5::is_float_1d(ds)) throw BadData(where + " is not a 1-D float64 dataset");
  if (!h5::has_fletcher32(ds)) throw BadData("no Fletcher32 checksum on " + where);
  try {
    return h5::read_f64_dataset(ds);
  } catch (const h5::Error& e) {
    if (e.is_checksum_failure()) throw BadData("checksum error in " + where);
    throw BadData("cannot read " + where + " (" + e.operation() + ": " + e.stack() + ")");
  }
}

// Each metric's unit and better side: the catalogue's, else what the record was read with,
// else none known ("", "none").
json figures_of(const RunRecord& record) {
  json out = json::object();
  for (const auto& [name, value] : record.metrics) {
    (void)value;
    RecordedFigure r{"", direction_name(Direction::None)};
    if (const FigureDef* f = find_figure(name)) r = {unit_name(f->unit), direction_name(f->direction)};
    else if (const auto it = record.figures.find(name); it != record.figures.end()) r = it->second;
    out[name] = {{"unit", r.unit}, {"direction", r.direction}};
  }
  return out;
}

// /figures of a version-2 file: an object of {"unit", "direction"} per metric, both names of
// the catalogue's; figures the catalogue lacks are declared from it.
std::map<std::string, RecordedFigure> read_figures(const json& j) {
  if (!j.is_object()) throw BadData("/figures is not a JSON object");
  std::map<std::string, RecordedFigure> out;
  for (const auto& [name, f] : j.items()) {
    const bool both = f.is_object() && f.contains("unit") && f["unit"].is_string() && f.contains("direction") && f["direction"].is_string();
    FigureUnit unit = FigureUnit::Plain;
    Direction direction = Direction::None;
    if (!both || !parse_figure_names(f["unit"].get<std::string>(), f["direction"].get<std::string>(), &unit, &direction))
      throw BadData("/figures: '" + name + "' needs a unit and a direction (higher, lower or none)");
    out.emplace(name, RecordedFigure{unit_name(unit), direction_name(direction)});
    declare_recorded_figure(name, unit, direction);
  }
  return out;
}

}  // namespace

void write_run_group(const h5::Object& group, const RunRecord& record) {
  LRB_CHECK(record.key == run_key_of(record.spec), "a record's key is the hash of its spec");
  h5::write_int_attribute(group, kSchemaVersionAttr, kResultsSchemaVersion);
  h5::write_string_attribute(group, kRunKeyAttr, record.key);
  h5::write_string_attribute(group, kVersionAttr, lrbench_version());
  h5::write_string_attribute(group, kRevisionAttr, git_revision());

  write_text_dataset(group, "spec", record.spec.dump());  // exactly the text the run key hashes
  write_text_dataset(group, "provenance", dump_lenient(record.provenance));
  write_text_dataset(group, "records", dump_lenient(record.records));
  write_text_dataset(group, "status", status_name(record.status));
  write_text_dataset(group, "error", without_nul(record.error));
  write_text_dataset(group, "figures", figures_of(record).dump());

  h5::Group metrics = h5::create_group(group, kMetricsGroup);
  for (const auto& [name, value] : record.metrics) {
    LRB_CHECK(valid_link_name(name), "metric name '" + name + "' is one HDF5 link name");
    h5::write_f64_dataset(metrics, name, {value}, false);
  }
  h5::Group curves = h5::create_group(group, kCurvesGroup);
  for (const auto& [name, values] : record.curves) {
    LRB_CHECK(valid_link_name(name), "curve name '" + name + "' is one HDF5 link name");
    h5::write_f64_dataset(curves, name, values, true);
  }
  // Last: a reader that finds the marker knows everything above was written.
  h5::write_int_attribute(group, kCompleteAttr, 1);
}

RunFileCheck read_run_group(const h5::Object& group, RunRead depth) {
  RunFileCheck out;
  try {
    const auto version = h5::read_int_attribute(group, kSchemaVersionAttr);
    if (!version) throw BadData("not a run file: no schema_version attribute");
    if (*version != 1 && *version != kResultsSchemaVersion)
      throw BadData("unknown schema_version " + std::to_string(*version) + " (this lrbench reads 1 to " +
                    std::to_string(kResultsSchemaVersion) + ")");
    const auto complete = h5::read_int_attribute(group, kCompleteAttr);
    if (!complete || *complete != 1) throw BadData("incomplete: no complete marker");
    const auto key = h5::read_string_attribute(group, kRunKeyAttr);
    if (!key) throw BadData("no run_key attribute");

    RunRecord r;
    r.key = *key;
    r.spec = parse_json(read_text_dataset(group, "spec", "/spec"), "spec");
    if (run_key_of(r.spec) != r.key) throw BadData("spec does not hash to the run key");
    if (const std::string problem = streams_problem(r.spec); !problem.empty()) throw BadData(problem);
    const std::string status = read_text_dataset(group, "status", "/status");
    try {
      r.status = status_from_name(status);
    } catch (const std::invalid_argument&) {
      throw BadData("unknown status '" + status + "' in /status");
    }
    if (depth == RunRead::Identity) {
      out.record = std::move(r);
      return out;
    }
    r.provenance = parse_json(read_text_dataset(group, "provenance", "/provenance"), "provenance");
    r.records = parse_json(read_text_dataset(group, "records", "/records"), "records");
    r.error = read_text_dataset(group, "error", "/error");
    // Version 1 recorded no units or directions: the catalogue's hold for them.
    if (*version >= 2) r.figures = read_figures(parse_json(read_text_dataset(group, "figures", "/figures"), "figures"));

    for (const char* group_name : {kMetricsGroup, kCurvesGroup}) {
      if (!h5::link_exists(group, group_name)) throw BadData(std::string("missing /") + group_name);
      h5::Group g = h5::open_group(group, group_name);
      for (const std::string& name : h5::link_names(g)) {
        std::vector<double> values = read_series(g, group_name, name);
        if (std::string_view(group_name) == kCurvesGroup) {
          r.curves.emplace(name, std::move(values));
        } else {
          if (values.size() != 1) throw BadData("/metrics/" + name + " does not hold exactly one value");
          r.metrics.emplace(name, values[0]);
        }
      }
    }
    out.record = std::move(r);
  } catch (const std::exception& e) {
    out.reason = validation_reason(e);
  }
  return out;
}

void write_run_file(const fs::path& path, const RunRecord& record) {
  if (ResultsLayout::in_runs_folder(path))
    LRB_CHECK(path.stem().string() == record.key, "a run file in runs/ is named by its run key");
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec)
    throw EnvironmentError("cannot create the results folder " + folder.string() + ": " + ec.message() +
                           "; choose an --out folder you can write to");
  // Built in memory, then written with its whole-file digest in one atomic publish.
  h5::MemoryFile file(path);
  {
    h5::Group root = h5::open_group(file.file(), "/");
    write_run_group(root, record);
    root.close();
  }
  h5::publish_memory_file(file, path);
}

RunFileCheck read_run_image(std::string_view bytes, const std::string& shown_as, RunRead depth) {
  RunFileCheck out;
  try {
    h5::File file;
    try {
      file = h5::open_image(bytes, shown_as);
    } catch (const h5::Error& e) {
      out.reason = "cannot open: not an HDF5 file (" + e.stack() + ")";
      return out;
    }
    h5::Group root = h5::open_group(file, "/");
    out = read_run_group(root, depth);
  } catch (const std::exception& e) {
    out.reason = validation_reason(e);
  }
  return out;
}

RunFileCheck read_run_file(const fs::path& path, std::string& bytes, RunRead depth) {
  RunFileCheck out;
  out.reason = read_sealed_file(path, bytes);
  if (!out.reason.empty()) return out;
  out = read_run_image(bytes, path.string(), depth);
  if (out.valid() && ResultsLayout::in_runs_folder(path) && path.stem().string() != out.record->key) {
    out.reason = "file name is not the run key (name " + path.stem().string() + ", key " + out.record->key + ")";
    out.record.reset();
  }
  return out;
}

RunFileCheck read_run_file(const fs::path& path, RunRead depth) {
  std::string bytes;
  return read_run_file(path, bytes, depth);
}

}  // namespace lrb
