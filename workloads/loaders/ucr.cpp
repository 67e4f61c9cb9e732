#include "workloads/loaders/ucr.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "suite/core/errors.h"
#include "suite/core/file_cache.h"
#include "suite/core/text.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

std::ifstream open_text(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw UserError(path + ": no such file; check the task's path options");
  if (fs::is_directory(path, ec)) throw UserError(path + ": is a folder, expected a .ts or .tsv file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path + ": cannot open for reading");
  return in;
}

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r' || s[b] == '\n')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '\n')) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

std::string at_line(const std::string& path, std::int64_t line) { return path + ":" + std::to_string(line); }

// Parses one value; UserError naming file, line and position otherwise.
float parse_value(std::string_view text, const std::string& path, std::int64_t line, const std::string& where) {
  std::string_view t = text;
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r')) t.remove_suffix(1);
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  double v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size()) {
    if (t == "?")
      throw UserError(at_line(path, line) + ": " + where + " is missing ('?'); missing values are not supported, "
                      "impute them before training");
    throw UserError(at_line(path, line) + ": " + where + " is not a number: '" + std::string(text) + "'");
  }
  if (!std::isfinite(v))
    throw UserError(at_line(path, line) + ": " + where + " is " + std::string(t) +
                    "; series must be finite and of equal length (UCR pads unequal series with NaN: "
                    "resample or truncate them first)");
  return static_cast<float>(v);
}

bool truthy(const std::string& v, const std::string& path, std::int64_t line, const std::string& tag) {
  const std::string l = lower(v);
  if (l == "true") return true;
  if (l == "false") return false;
  throw UserError(at_line(path, line) + ": " + tag + " takes true or false, got '" + v + "'");
}

// Cases become [n, L, C]; all must share L and C.
at::Tensor stack_cases(const std::vector<std::vector<float>>& cases, std::int64_t length, std::int64_t channels) {
  auto x = at::empty({static_cast<std::int64_t>(cases.size()), length, channels}, at::kFloat);
  auto* p = x.data_ptr<float>();
  for (std::size_t i = 0; i < cases.size(); ++i)  // cases are stored channel-major
    for (std::int64_t c = 0; c < channels; ++c)
      for (std::int64_t t = 0; t < length; ++t)
        p[(static_cast<std::int64_t>(i) * length + t) * channels + c] = cases[i][c * length + t];
  return x;
}

}  // namespace

namespace {

// What a .ts file's header declares, as far as this task needs it.
struct TsHeader {
  bool class_labels = false, univariate_given = false, univariate = false;
  std::int64_t dims_declared = 0;
};

// One header line (`@tag rest`); true at @data.
bool read_ts_header_line(const std::string& line, const std::string& path, std::int64_t line_no, TsHeader& h, SeriesSet& s) {
  if (line[0] != '@')
    throw UserError(at_line(path, line_no) + ": expected a header line starting with '@' or '@data' before the data");
  const auto space = line.find_first_of(" \t");
  const std::string tag = lower(line.substr(0, space));
  const std::string rest = space == std::string::npos ? "" : trim(line.substr(space));
  if (tag == "@data") {
    if (!h.class_labels)
      throw UserError(at_line(path, line_no) + ": @data comes before a '@classLabel true <labels...>' line; "
                      "this task needs class labels");
    return true;
  }
  if (tag == "@timestamps") {
    if (truthy(rest, path, line_no, "@timeStamps"))
      throw UserError(at_line(path, line_no) + ": time-stamped series are not supported; export the series "
                      "without time stamps (@timeStamps false)");
  } else if (tag == "@univariate") {
    h.univariate_given = true;
    h.univariate = truthy(rest, path, line_no, "@univariate");
  } else if (tag == "@dimensions") {
    try {
      h.dims_declared = std::stoll(rest);
    } catch (...) {
      h.dims_declared = 0;
    }
    if (h.dims_declared <= 0) throw UserError(at_line(path, line_no) + ": @dimensions takes a positive integer");
  } else if (tag == "@classlabel") {
    std::vector<std::string> words;
    for (const auto& w : split(rest, ' '))
      if (!trim(w).empty()) words.push_back(trim(w));
    if (words.empty() || !truthy(words[0], path, line_no, "@classLabel"))
      throw UserError(at_line(path, line_no) + ": '@classLabel false' (no class labels): this task needs "
                      "'@classLabel true <label> <label> ...'");
    s.class_names.assign(words.begin() + 1, words.end());
    if (s.class_names.size() < 2)
      throw UserError(at_line(path, line_no) + ": @classLabel true lists " + std::to_string(s.class_names.size()) +
                      " labels; a classification problem needs two or more");
    for (std::size_t i = 0; i < s.class_names.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (s.class_names[i] == s.class_names[j])
          throw UserError(at_line(path, line_no) + ": @classLabel lists '" + s.class_names[i] + "' twice");
    h.class_labels = true;
  } else if (tag == "@targetlabel") {
    if (truthy(rest, path, line_no, "@targetLabel"))
      throw UserError(at_line(path, line_no) + ": regression targets (@targetLabel true) are not supported; "
                      "this task classifies");
  }
  // @problemName, @missing, @equalLength, @seriesLength and others carry nothing we need.
  return false;
}

// One case, `dimension:dimension:...:label`: its values (channel-major) appended to `cases`,
// its shape held to the first case's (`length`, `channels`; -1 before it).
void read_ts_case(const std::string& line, const std::string& path, std::int64_t line_no, const TsHeader& h,
                  std::int64_t& length, std::int64_t& channels, std::vector<std::vector<float>>& cases, SeriesSet& s) {
  auto parts = split(line, ':');
  if (parts.size() < 2)
    throw UserError(at_line(path, line_no) + ": a case needs its values and a label separated by ':' "
                    "(e.g. 1.0,2.0,3.0:label)");
  const std::string label = trim(parts.back());
  parts.pop_back();
  const auto c = static_cast<std::int64_t>(parts.size());
  if (channels < 0) {
    channels = c;
    const std::int64_t want = h.dims_declared > 0 ? h.dims_declared : h.univariate_given && h.univariate ? 1 : c;
    if (c != want)
      throw UserError(at_line(path, line_no) + ": the case has " + std::to_string(c) + " dimensions but the header "
                      "declares " + std::to_string(want));
  } else if (c != channels) {
    throw UserError(at_line(path, line_no) + ": the case has " + std::to_string(c) + " dimensions, earlier cases have " +
                    std::to_string(channels) + "; every case needs the same number of dimensions");
  }
  std::vector<float> values;
  for (std::int64_t d = 0; d < c; ++d) {
    const auto fields = split(parts[static_cast<std::size_t>(d)], ',');
    const auto len = static_cast<std::int64_t>(fields.size());
    if (length < 0) length = len;
    if (len != length)
      throw UserError(at_line(path, line_no) + ": dimension " + std::to_string(d + 1) + " has " + std::to_string(len) +
                      " values, earlier series have " + std::to_string(length) +
                      "; series must have equal lengths (resample or pad them first)");
    for (std::int64_t k = 0; k < len; ++k)
      values.push_back(parse_value(fields[static_cast<std::size_t>(k)], path, line_no,
                                   "value " + std::to_string(k + 1) + " of dimension " + std::to_string(d + 1)));
  }
  cases.push_back(std::move(values));
  s.labels.push_back(label);
  s.lines.push_back(line_no);
}

}  // namespace

SeriesSet read_ts(const std::string& path) {
  std::ifstream in = open_text(path);
  SeriesSet s;
  s.path = path;
  TsHeader header;
  bool in_data = false;
  std::int64_t length = -1, channels = -1, line_no = 0;
  std::vector<std::vector<float>> cases;
  std::string raw;
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    if (!in_data)
      in_data = read_ts_header_line(line, path, line_no, header, s);
    else
      read_ts_case(line, path, line_no, header, length, channels, cases, s);
  }
  if (!in_data) throw UserError(path + ": no @data line; is this a sktime .ts file?");
  if (cases.empty()) throw UserError(path + ": no cases after @data");
  s.x = stack_cases(cases, length, channels);
  label_ids(s, s.class_names);  // every label declared
  return s;
}

SeriesSet read_tsv(const std::string& path) {
  std::ifstream in = open_text(path);
  SeriesSet s;
  s.path = path;
  std::int64_t length = -1, line_no = 0;
  std::vector<std::vector<float>> cases;
  std::string raw;
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string line = trim(raw);
    if (line.empty()) continue;
    const auto fields = split(line, '\t');
    if (fields.size() < 2)
      throw UserError(at_line(path, line_no) + ": expected a label then tab-separated values (UCR .tsv)");
    const auto len = static_cast<std::int64_t>(fields.size()) - 1;
    if (length < 0) length = len;
    if (len != length)
      throw UserError(at_line(path, line_no) + ": the series has " + std::to_string(len) + " values, earlier series have " +
                      std::to_string(length) + "; series must have equal lengths");
    std::vector<float> values(static_cast<std::size_t>(len));
    for (std::int64_t k = 0; k < len; ++k)
      values[static_cast<std::size_t>(k)] =
          parse_value(fields[static_cast<std::size_t>(k + 1)], path, line_no, "value " + std::to_string(k + 1));
    cases.push_back(std::move(values));
    s.labels.push_back(trim(fields[0]));
    s.lines.push_back(line_no);
  }
  if (cases.empty()) throw UserError(path + ": holds no series");
  s.x = stack_cases(cases, length, 1);
  return s;
}

SeriesSet read_series_file(const std::string& path) {
  const std::string ext = lower(fs::path(path).extension().string());
  if (ext == ".ts") return read_ts(path);
  if (ext == ".tsv" || ext == ".txt") return read_tsv(path);
  throw UserError(path + ": unknown time-series file type '" + ext + "'; use a sktime .ts file or a UCR .tsv file");
}

std::shared_ptr<const SeriesSet> read_series_file_cached(const std::string& path) {
  static FileCache<std::shared_ptr<const SeriesSet>> cache([](const std::shared_ptr<const SeriesSet>& s) {
    std::uint64_t bytes = s->x.nbytes() + s->lines.size() * sizeof(std::int64_t);
    for (const auto& l : s->labels) bytes += l.size();
    return bytes;
  });
  return cache.get(path, [](const std::string& p) { return std::make_shared<const SeriesSet>(read_series_file(p)); });
}

std::vector<std::int64_t> label_ids(const SeriesSet& s, const std::vector<std::string>& classes) {
  std::vector<std::int64_t> out;
  out.reserve(s.labels.size());
  for (std::size_t i = 0; i < s.labels.size(); ++i) {
    const auto it = std::find(classes.begin(), classes.end(), s.labels[i]);
    if (it == classes.end())
      throw UserError(at_line(s.path, s.lines[i]) + ": label '" + s.labels[i] + "' is not one of the classes (" +
                      join(classes, ", ") + ")" +
                      (s.class_names.empty() ? "; evaluation labels must appear in the training file"
                                             : "; add it to the @classLabel line or fix the case"));
    out.push_back(it - classes.begin());
  }
  return out;
}

std::vector<std::string> sorted_classes(const std::vector<std::string>& labels) {
  const std::set<std::string> distinct(labels.begin(), labels.end());
  const std::vector<std::string> u(distinct.begin(), distinct.end());
  std::vector<std::pair<double, std::string>> numeric;
  for (const auto& l : u) {
    double v = 0;
    const auto r = std::from_chars(l.data(), l.data() + l.size(), v);
    if (r.ec != std::errc() || r.ptr != l.data() + l.size()) return u;
    numeric.emplace_back(v, l);
  }
  std::sort(numeric.begin(), numeric.end());
  std::vector<std::string> out;
  for (auto& [v, l] : numeric) out.push_back(l);
  return out;
}

}  // namespace lrb
