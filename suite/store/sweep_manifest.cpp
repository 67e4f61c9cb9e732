#include "suite/store/sweep_manifest.h"

#include "suite/core/errors.h"
#include "suite/core/files.h"
#include "suite/store/results_folder.h"
#include "suite/store/results_layout.h"

namespace lrb {

namespace {

using json = nlohmann::json;

const json* field(const json& j, const char* name, json::value_t type, const char* type_text, bool required) {
  if (!j.contains(name)) {
    if (required) throw UserError(std::string("no \"") + name + "\"");
    return nullptr;
  }
  const json& v = j.at(name);
  if (v.type() != type) throw UserError(std::string("\"") + name + "\" is not " + type_text);
  return &v;
}

std::string string_at(const json& j, const char* name, const std::string& where) {
  if (!j.contains(name) || !j.at(name).is_string()) throw UserError(where + " has no string \"" + name + "\"");
  return j.at(name).get<std::string>();
}

}  // namespace

SweepManifest make_sweep_manifest(const SweepSpec& spec, const ExpandedSweep& ex) {
  SweepManifest m{spec.sweep.name, spec.file, {}, ex.skipped, ex.claims, spec.sweep.sequential, spec.sweep.budget_seconds, {}};
  for (const auto& r : ex.runs) {
    m.runs.push_back(r.key);
    if (spec.sweep.sequential) m.wave_runs.push_back(wave_run(r.spec, ex.claims));
  }
  return m;
}

bool is_run_key(std::string_view text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

json SweepManifest::to_json() const {
  json skipped_json = json::array();
  for (const auto& s : skipped) skipped_json.push_back({{"what", s.what}, {"reason", s.reason}});
  json claims_json = json::array();
  for (const auto& c : claims) claims_json.push_back(c.to_json());
  json j = {{"sweep", sweep}, {"file", file}, {"runs", runs}, {"skipped", skipped_json}, {"claims", claims_json}};
  if (sequential) {
    j["sequential"] = sequential->to_json();
    if (budget_seconds) j["sequential"]["budget_s"] = *budget_seconds;
    json w = json::array();
    for (const auto& r : wave_runs) w.push_back(json::array({r.seed, r.claims}));
    j["sequential"]["runs"] = std::move(w);
  }
  return j;
}

SweepManifest SweepManifest::from_json(const json& j) {
  if (!j.is_object()) throw UserError("not a JSON object");
  SweepManifest m;
  m.sweep = field(j, "sweep", json::value_t::string, "a string", true)->get<std::string>();
  if (const json* f = field(j, "file", json::value_t::string, "a string", false)) m.file = f->get<std::string>();
  const json& runs = *field(j, "runs", json::value_t::array, "an array", true);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].is_string() || !is_run_key(runs[i].get_ref<const std::string&>()))
      throw UserError("runs[" + std::to_string(i) + "] is not a run key (64 hex digits)");
    m.runs.push_back(runs[i].get<std::string>());
  }
  if (const json* skipped = field(j, "skipped", json::value_t::array, "an array", false))
    for (std::size_t i = 0; i < skipped->size(); ++i) {
      const json& s = (*skipped)[i];
      const std::string where = "skipped[" + std::to_string(i) + "]";
      if (!s.is_object()) throw UserError(where + " is not an object");
      m.skipped.push_back({string_at(s, "what", where), string_at(s, "reason", where)});
    }
  if (const json* claims = field(j, "claims", json::value_t::array, "an array", false))
    for (std::size_t i = 0; i < claims->size(); ++i) {
      try {
        m.claims.push_back(ClaimSpec::from_json((*claims)[i]));
      } catch (const std::exception& e) {
        throw UserError("claims[" + std::to_string(i) + "] cannot be read (" + e.what() + ")");
      }
    }
  if (const json* design = field(j, "sequential", json::value_t::object, "an object", false)) {
    try {
      m.sequential = SequentialSeeds::from_json(*design);
      if (design->contains("budget_s")) {
        const double b = design->at("budget_s").get<double>();
        if (!(b > 0) || b > kMaxBudgetSeconds) throw UserError("budget_s is not a positive time of at most a year");
        m.budget_seconds = b;
      }
      if (design->contains("runs")) {
        const json& w = design->at("runs");
        if (!w.is_array() || w.size() != m.runs.size()) throw UserError("sequential.runs does not list every run");
        for (const auto& r : w) {
          WaveRun x{r.at(0).get<std::int64_t>(), r.at(1).get<std::vector<std::size_t>>()};
          for (std::size_t c : x.claims)
            if (c >= m.claims.size()) throw UserError("sequential.runs names a claim that is not there");
          m.wave_runs.push_back(std::move(x));
        }
      }
    } catch (const json::exception& e) {
      throw UserError(std::string("\"sequential\" cannot be read (") + e.what() + ")");
    } catch (const UserError& e) {
      throw UserError(std::string("\"sequential\" cannot be read (") + e.what() + ")");
    }
    if (m.claims.empty()) throw UserError("\"sequential\" is given but there are no claims");
  }
  return m;
}

void write_sweep_manifest(const std::filesystem::path& dir, const SweepManifest& manifest) {
  write_file_atomic(ResultsLayout(dir).manifest(), manifest.to_json().dump(2));
}

std::optional<SweepManifest> read_sweep_manifest(const std::filesystem::path& dir) {
  const auto path = ResultsLayout(dir).manifest();
  if (!std::filesystem::exists(path)) return std::nullopt;
  const std::string text = read_user_file(path, kMaxManifestBytes, "the manifest");
  try {
    return SweepManifest::from_json(json::parse(text));
  } catch (const json::exception& e) {
    throw UserError(path.string() + ": not valid JSON (" + e.what() + "); remove it or run the sweep again to rewrite it");
  } catch (const UserError& e) {
    throw UserError(path.string() + ": " + e.what() + "; remove it or run the sweep again to rewrite it");
  }
}

}  // namespace lrb
