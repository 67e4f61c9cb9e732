#pragma once
// DIR/study.json: the wall time a sequential study has spent, over all its sessions (each
// `lrbench run` of it, on one process, on MPI ranks, or one shard of a Slurm array), so that
// a budget holds across stops, requeues and resubmissions. Sessions that ran at the same
// time (the shards of an array) count once: the time spent is the length of the union of
// the sessions' intervals. A session writes its interval when it starts, at each look and
// run it hands out (the heartbeat), and when it ends; a process killed outright loses only
// the time since its last heartbeat. Written atomically under DIR/.lock-study.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lrb {

struct StudySession {
  std::string id;      // host/pid/start: unique per session
  double start = 0;    // seconds since the epoch
  double end = 0;      // the last heartbeat: start plus the time since on a monotonic clock
  nlohmann::json to_json() const;
  // Why a reader refuses it ("its start and end are not times in order"), or "".
  std::string problem() const;
};

struct StudyLog {
  std::vector<StudySession> sessions;
  std::string ended;   // how the study ended ("every claim decided", "budget spent", ...), "" while it runs
  // The study's identity, mixed into every random stream of its runs (RunSpec::seed_base):
  // a new study of the same claims, in another folder, draws new seeds instead of replaying
  // the ones already looked at. "" for a study that began before studies had one (its runs
  // keep the seeds they were drawn with).
  std::string study_id;

  double spent_seconds() const;  // the length of the union of the sessions' intervals
  nlohmann::json to_json() const;
  static StudyLog from_json(const nlohmann::json& j);  // UserError on a document that is not one
};

// DIR/study.json, or an empty log when there is none. A damaged file is a UserError naming
// it (removing it forgets the time spent so far, which the budget then grants again).
StudyLog read_study_log(const std::filesystem::path& dir);

double unix_seconds_now();

// The identity of the sequential study in `dir`, settled once under DIR/.lock-study (shards
// of an array, or `lrbench slurm` before them, settle it together): the recorded one; else,
// for a folder where nothing of the study has been seen yet (no run file, no merged file,
// no session), `requested` or a new random one, recorded; else "" (a study begun before
// identities keeps its seeds). UserError when `requested` is not a study id (1 to 32 of
// 0-9 a-f) or differs from what the folder holds.
std::string settle_study_id(const std::filesystem::path& dir, const std::string& requested);
// Why `id` is not a study id, or "".
std::string study_id_problem(const std::string& id);

// One session's clock: registered when made, its end moved forward by beat(), written when
// destroyed. Every write merges with what other sessions wrote meanwhile. Its start is the
// wall clock's (sessions of several hosts are laid on one time line); its length is the
// monotonic clock's, so a wall clock stepped back (NTP, a suspend) never ends a session
// before it began: a log lrbench would then refuse to read.
class StudyClock {
 public:
  // `wall_clock`: seconds since the epoch (a test's may step back).
  explicit StudyClock(std::filesystem::path dir, std::function<double()> wall_clock = unix_seconds_now);
  ~StudyClock();
  StudyClock(const StudyClock&) = delete;
  StudyClock& operator=(const StudyClock&) = delete;

  // Moves this session's end to now and returns the study's time spent so far.
  double beat();
  // Records how the study ended (and beats).
  void ended(const std::string& how);

 private:
  void write(const std::string& ended);
  double now() const;  // start plus the monotonic time since
  std::filesystem::path dir_;
  StudySession me_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace lrb
