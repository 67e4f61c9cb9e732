#include "suite/store/study_log.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <cmath>

#include <fmt/format.h>

#include "suite/core/errors.h"
#include "suite/core/files.h"
#include "suite/store/results_folder.h"
#include "suite/store/results_layout.h"

namespace lrb {

namespace {
using json = nlohmann::json;
// A study log holds one entry per session: thousands at most (a session per array task and look).
constexpr std::uintmax_t kMaxStudyLogBytes = std::uintmax_t{16} << 20;
}  // namespace

double unix_seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

json StudySession::to_json() const { return {{"id", id}, {"start", start}, {"end", end}}; }

std::string StudySession::problem() const {
  if (!std::isfinite(start) || !std::isfinite(end) || start < 0 || end < start) return "a session's start and end are not times in order";
  return "";
}

double StudyLog::spent_seconds() const {
  std::vector<std::pair<double, double>> spans;
  for (const auto& s : sessions) spans.emplace_back(s.start, std::max(s.start, s.end));
  std::sort(spans.begin(), spans.end());
  double total = 0, lo = 0, hi = 0;
  bool open = false;
  for (const auto& [a, b] : spans) {
    if (open && a <= hi) {
      hi = std::max(hi, b);
      continue;
    }
    if (open) total += hi - lo;
    lo = a;
    hi = b;
    open = true;
  }
  if (open) total += hi - lo;
  return total;
}

json StudyLog::to_json() const {
  json s = json::array();
  for (const auto& x : sessions) s.push_back(x.to_json());
  json j = {{"sessions", s}, {"ended", ended}, {"spent_s", spent_seconds()}};
  if (!study_id.empty()) j["study_id"] = study_id;
  return j;
}

StudyLog StudyLog::from_json(const json& j) {
  StudyLog log;
  try {
    for (const auto& s : j.at("sessions")) {
      StudySession x{s.at("id").get<std::string>(), s.at("start").get<double>(), s.at("end").get<double>()};
      if (const std::string why = x.problem(); !why.empty()) throw UserError(why);
      log.sessions.push_back(std::move(x));
    }
    log.ended = j.value("ended", std::string());
    log.study_id = j.value("study_id", std::string());
    if (const std::string why = study_id_problem(log.study_id); !log.study_id.empty() && !why.empty()) throw UserError(why);
  } catch (const json::exception& e) {
    throw UserError(std::string("not a study log (") + e.what() + ")");
  }
  return log;
}

StudyLog read_study_log(const std::filesystem::path& dir) {
  const auto path = ResultsLayout(dir).study_log();
  if (!std::filesystem::exists(path)) return {};
  const std::string text = read_user_file(path, kMaxStudyLogBytes, "the study log");
  try {
    return StudyLog::from_json(json::parse(text));
  } catch (const json::exception& e) {
    throw UserError(path.string() + ": not valid JSON (" + e.what() + "); remove it to go on (the budget then counts from zero again)");
  } catch (const UserError& e) {
    throw UserError(path.string() + ": " + e.what() + "; remove it to go on (the budget then counts from zero again)");
  }
}

StudyClock::StudyClock(std::filesystem::path dir, std::function<double()> wall_clock)
    : dir_(std::move(dir)), started_(std::chrono::steady_clock::now()) {
  me_.start = me_.end = std::max(0.0, wall_clock());  // a clock before 1970 is not a time a reader takes
  me_.id = fmt::format("{}/{}/{:.3f}", host_name(), static_cast<long>(::getpid()), me_.start);
  write("");
}

StudyClock::~StudyClock() {
  try {
    me_.end = now();
    write("");
  } catch (const std::exception&) {
    // The last heartbeat stands: at most the time since it is not counted.
  }
}

double StudyClock::now() const {
  return me_.start + std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

double StudyClock::beat() {
  me_.end = now();
  write("");
  return read_study_log(dir_).spent_seconds();
}

void StudyClock::ended(const std::string& how) {
  me_.end = now();
  write(how);
}

void StudyClock::write(const std::string& ended) {
  const ResultsLayout where(dir_);
  FileLock lock(where.study_lock());  // atomic writes either way: without flock a concurrent beat may be lost
  StudyLog log = read_study_log(dir_);
  auto it = std::find_if(log.sessions.begin(), log.sessions.end(), [&](const StudySession& s) { return s.id == me_.id; });
  const bool fresh = it == log.sessions.end();
  if (fresh) log.sessions.push_back(me_);
  else *it = me_;
  if (!ended.empty()) log.ended = ended;
  else if (fresh) log.ended.clear();  // a new session: the study runs again
  // Never write what read_study_log would refuse: the folder would be stuck.
  LRB_CHECK(me_.problem().empty(), "a study session's own times are out of order");
  write_file_atomic(where.study_log(), log.to_json().dump(1) + "\n");
}

std::string study_id_problem(const std::string& id) {
  const bool hex = std::all_of(id.begin(), id.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  if (id.empty() || id.size() > 32 || !hex) return fmt::format("'{}' is not a study id: 1 to 32 of the characters 0-9 and a-f", id);
  return "";
}

std::string settle_study_id(const std::filesystem::path& dir, const std::string& requested) {
  namespace fs = std::filesystem;
  if (!requested.empty())
    if (const std::string why = study_id_problem(requested); !why.empty()) throw UserError("--study-id: " + why);
  const ResultsLayout where(dir);
  fs::create_directories(dir);
  FileLock lock(where.study_lock());
  const bool fresh = !(fs::exists(where.runs()) && !fs::is_empty(where.runs())) && !fs::exists(where.merged());
  StudyLog log = read_study_log(dir);
  if (!log.study_id.empty()) {
    if (!requested.empty() && requested != log.study_id)
      throw UserError(fmt::format("--study-id {}: the study in {} is {} ({}); leave --study-id out to go on with it, or start "
                                  "study {} in another --out folder",
                                  requested, dir.string(), log.study_id, where.study_log().string(), requested));
    return log.study_id;
  }
  if (!fresh || !log.sessions.empty()) {
    if (!requested.empty())
      throw UserError(fmt::format("--study-id {}: the study in {} began before studies had an identity, and its runs keep the "
                                  "seeds they were drawn with; leave --study-id out to go on with it",
                                  requested, dir.string()));
    return "";
  }
  if (requested.empty()) {
    std::random_device entropy;  // a new study: seeds nobody has looked at
    log.study_id = fmt::format("{:08x}{:08x}", entropy(), entropy());
  } else {
    log.study_id = requested;  // a replay, asked for by name
  }
  write_file_atomic(where.study_log(), log.to_json().dump(1) + "\n");
  return log.study_id;
}

}  // namespace lrb
