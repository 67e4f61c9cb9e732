#include "suite/mpi/mpirun_launch.h"

#include <fmt/core.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "suite/core/child_process.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/stop_flag.h"

namespace lrb {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kSigusr1Bit = std::uint64_t{1} << (SIGUSR1 - 1);

// A signal mask of /proc/<pid>/status ("SigBlk", "SigCgt"); 0 when it cannot be read.
std::uint64_t signal_mask(pid_t pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  const std::string prefix = name + ":";
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return std::strtoull(line.c_str() + prefix.size(), nullptr, 16);
  return 0;
}

std::string program_of(pid_t pid) {
  std::error_code ec;
  return fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec).string();
}

// The processes whose parent is `parent`: mpirun's ranks on this machine, which it forks
// itself.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(it->path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');  // the command's name may hold spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = 0;
    long ppid = 0;
    if (rest >> state >> ppid && ppid == parent) out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

// Whether a rank is past the moment a SIGUSR1 would kill it: it has left mpirun's image
// (exec'd) and blocks SIGUSR1 (the lrbench launcher, first thing) or catches it
// (lrbench-core). A rank only turns from not ready to ready, never back.
bool takes_stop(pid_t pid, const std::string& mpirun_program) {
  const std::string program = program_of(pid);
  if (program.empty() || program == mpirun_program) return false;
  return ((signal_mask(pid, "SigBlk") | signal_mask(pid, "SigCgt")) & kSigusr1Bit) != 0;
}

// A stop request, handed to every rank as SIGUSR1 once it can take it. mpirun forwards a
// SIGUSR1 only to the ranks it has started by then, and a rank between mpirun's fork and
// the launcher's first instruction dies of it: so each rank on this machine is signalled
// itself, once, as soon as it is ready, for as long as mpirun runs. Ranks mpirun placed on
// other hosts (a --host of the user's) only mpirun reaches: it is asked to forward, once
// it catches SIGUSR1, while some rank was not reached here.
class StopForwarder {
 public:
  StopForwarder(pid_t mpirun, int ranks) : mpirun_(mpirun), ranks_(ranks) {}
  void tick() {
    if (!stop_requested()) return;
    const auto now = Clock::now();
    if (!since_) {
      since_ = now;
      mpirun_program_ = program_of(mpirun_);
    }
    bool all_ready = true;
    for (const pid_t rank : children_of(mpirun_)) {
      if (told_.count(rank)) continue;
      if (!takes_stop(rank, mpirun_program_)) {
        all_ready = false;
        continue;
      }
      ::kill(rank, SIGUSR1);
      told_.insert(rank);
    }
    const bool elsewhere = static_cast<int>(told_.size()) < ranks_ && now - *since_ >= std::chrono::seconds(1);
    if (elsewhere && all_ready && now >= next_forward_ && (signal_mask(mpirun_, "SigCgt") & kSigusr1Bit) != 0) {
      ::kill(mpirun_, SIGUSR1);
      next_forward_ = now + std::chrono::seconds(1);
    }
  }

 private:
  pid_t mpirun_;
  int ranks_;
  std::optional<Clock::time_point> since_;
  Clock::time_point next_forward_{};
  std::string mpirun_program_;
  std::set<pid_t> told_;
};

}  // namespace

int run_under_mpirun(const std::vector<std::string>& mpirun_args, int ranks) {
  // A stop before anything started (while the layout was chosen): nothing ran, nothing is
  // lost; resumable like any stop.
  if (stop_requested()) {
    fmt::print(stderr, "lrbench: stopped by signal {} before mpirun started; run the same command again to start\n",
               stop_signal());
    return kExitStopped;
  }
  ChildOptions options;
  options.argv = {"mpirun"};
  options.argv.insert(options.argv.end(), mpirun_args.begin(), mpirun_args.end());
  // Its own process group: a terminal's Ctrl-C reaches lrbench, which forwards a stop.
  options.own_process_group = true;
  int error = 0;
  auto mpirun = ChildProcess::start(options, &error);
  if (!mpirun) throw UserError(std::string("cannot run mpirun: ") + std::strerror(error) + " (is Open MPI installed?)");
  StopForwarder forwarder(mpirun->pid(), ranks);
  const ChildExit exit = mpirun->wait(std::nullopt, [&] { forwarder.tick(); });
  if (exit.exit_code >= 0) return exit.exit_code;
  return kExitInternal;  // mpirun itself was killed
}

}  // namespace lrb
