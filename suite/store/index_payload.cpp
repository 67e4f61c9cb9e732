#include "suite/store/index_payload.h"

#include <cstdint>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/contracts/figures.h"
#include "suite/store/text_dataset.h"  // BadData

namespace lrb {

namespace {

using json = nlohmann::json;

// SAX events of the payload, straight into a RunRecord: spec, provenance, records, error and
// curves are built as JSON values (as json::from_cbor builds them), the metrics go straight
// into the record's map. Any event a view cannot hold answers false, and parsing stops.
class ViewReader {
 public:
  explicit ViewReader(RunRecord& r) : r_(r) {}

  bool null() { return scalar(json()); }
  bool boolean(bool v) { return scalar(json(v)); }
  bool number_integer(std::int64_t v) { return depth_ == 2 && field_ == Field::Metrics ? metric(static_cast<double>(v)) : scalar(json(v)); }
  bool number_unsigned(std::uint64_t v) { return depth_ == 2 && field_ == Field::Metrics ? metric(static_cast<double>(v)) : scalar(json(v)); }
  bool number_float(double v, const std::string&) { return depth_ == 2 && field_ == Field::Metrics ? metric(v) : scalar(json(v)); }
  bool string(std::string& v) { return scalar(json(std::move(v))); }
  bool binary(json::binary_t& v) { return scalar(json(std::move(v))); }

  bool start_object(std::size_t) {
    if (depth_ == 0) {  // the payload itself
      ++depth_;
      return true;
    }
    if (field_ == Field::Metrics) {
      if (depth_ != 1) return false;
      ++depth_;
      return true;
    }
    return open(json::object());
  }
  bool key(std::string& k) {
    if (depth_ == 1) return start_field(k);
    if (field_ == Field::Metrics) {
      metric_name_ = std::move(k);
      return true;
    }
    object_element_ = &(*stack_.back())[std::move(k)];
    return true;
  }
  bool end_object() {
    --depth_;
    if (depth_ == 0 || (field_ == Field::Metrics && depth_ == 1)) return true;
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) { return depth_ != 0 && field_ != Field::Metrics && open(json::array()); }
  bool end_array() {
    --depth_;
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    throw BadData(std::string("an index payload is not CBOR: ") + e.what());
  }

  // After a successful parse: the fields that are not built in place, and the check that
  // every field was there.
  void finish() {
    if (seen_ != kAllFields) throw BadData("an index payload lacks a field");
    r_.error = error_.get<std::string>();
    for (auto& [name, values] : curves_.items())
      r_.curves.emplace_hint(r_.curves.end(), name, values.get<std::vector<double>>());
    // Optional: [unit, direction] of the figures that are not lrbench's own.
    if (figures_.is_object())
      for (auto& [name, f] : figures_.items()) {
        const bool pair = f.is_array() && f.size() == 2 && f[0].is_string() && f[1].is_string();
        const std::string unit_text = pair ? f[0].get<std::string>() : "?", direction_text = pair ? f[1].get<std::string>() : "?";
        FigureUnit unit = FigureUnit::Plain;
        Direction direction = Direction::None;
        if (!parse_figure_names(unit_text, direction_text, &unit, &direction))
          throw BadData("an index payload's figure '" + name + "' is not [unit, direction]");
        r_.figures.emplace(name, RecordedFigure{unit_name(unit), direction_name(direction)});
        declare_recorded_figure(name, unit, direction);
      }
  }

 private:
  enum class Field { Spec, Error, Metrics, Curves, Provenance, Records, Figures, Other };
  static constexpr unsigned kAllFields = (1u << 6) - 1;

  // Fields other than the six (none today) are read and left, as json::from_cbor would; a
  // field twice counts its last value.
  bool start_field(const std::string& k) {
    static const std::pair<const char*, Field> kFields[] = {{"spec", Field::Spec},         {"error", Field::Error},
                                                            {"metrics", Field::Metrics},   {"curves", Field::Curves},
                                                            {"provenance", Field::Provenance}, {"records", Field::Records}};
    field_ = Field::Other;
    for (const auto& [name, field] : kFields)
      if (k == name) field_ = field;
    if (k == "figures") field_ = Field::Figures;  // optional: not counted in seen_
    if (field_ != Field::Other && field_ != Field::Figures) seen_ |= 1u << static_cast<unsigned>(field_);
    if (field_ == Field::Metrics) r_.metrics.clear();
    target_ = field_ == Field::Spec         ? &r_.spec
              : field_ == Field::Error      ? &error_
              : field_ == Field::Curves     ? &curves_
              : field_ == Field::Provenance ? &r_.provenance
              : field_ == Field::Records    ? &r_.records
              : field_ == Field::Figures    ? &figures_
                                            : &other_;
    return true;
  }
  bool metric(double v) {
    // The payload's objects come in key order: each name goes at the end (a name twice keeps
    // its last value, as in json::from_cbor's document).
    r_.metrics.insert_or_assign(r_.metrics.end(), std::move(metric_name_), v);
    return true;
  }
  // Places a value where the field's document expects the next one.
  json* put(json&& v) {
    if (stack_.empty()) {
      *target_ = std::move(v);
      return target_;
    }
    json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    *object_element_ = std::move(v);
    return object_element_;
  }
  bool scalar(json&& v) {
    if (depth_ == 0 || (field_ == Field::Metrics)) return false;  // the payload is an object; metrics are numbers
    put(std::move(v));
    return true;
  }
  bool open(json&& container) {
    stack_.push_back(put(std::move(container)));
    ++depth_;
    return true;
  }

  RunRecord& r_;
  int depth_ = 0;  // objects and arrays open, the payload's own counted
  Field field_ = Field::Spec;
  unsigned seen_ = 0;
  json* target_ = nullptr;
  std::vector<json*> stack_;  // the field's open objects and arrays
  json* object_element_ = nullptr;
  std::string metric_name_;
  json error_, curves_, figures_, other_;
};

}  // namespace

std::string encode_view_payload(const RunRecord& view) {
  json j = {{"spec", view.spec}, {"error", view.error}, {"metrics", view.metrics}, {"curves", view.curves},
            {"provenance", view.provenance}, {"records", view.records}};
  if (!view.figures.empty()) {
    json& figures = j["figures"];
    for (const auto& [name, f] : view.figures) figures[name] = {f.unit, f.direction};
  }
  const std::vector<std::uint8_t> cbor = json::to_cbor(j);
  return std::string(cbor.begin(), cbor.end());
}

void decode_view_payload(std::string_view payload, RunRecord& into) {
  ViewReader reader(into);
  if (!json::sax_parse(payload.begin(), payload.end(), &reader, json::input_format_t::cbor))
    throw BadData("an index payload is not a run's view");
  reader.finish();
}

}  // namespace lrb
