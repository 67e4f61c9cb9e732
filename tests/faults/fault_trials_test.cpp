// Faults at random: trials on a small 2-rank sweep, each disturbed once — a rank killed
// (SIGKILL), a stop signal (SIGTERM or SIGUSR1) to one rank or both, the disk full (a small
// tmpfs as the results folder, or a file size limit without root), or a finished run file
// damaged (a flipped byte, a cut, a zeroed page) — and then the same command again. After
// each trial: every run there exactly once, each equal to the undisturbed reference in
// everything deterministic (run files hold their host, pid and times, so bytes differ),
// no damaged file kept as finished, no temporary file left, and every message clear (no
// crash, no abort, exit codes as documented).
//
// LRB_FAULT_TRIALS (default 4: one of each kind) and LRB_FAULT_SEED (default: the time;
// printed, so a failing trial can be replayed) choose the trials; LRB_FAULT_SUMMARY names
// a file for the Markdown summary. tests/faults/run.sh runs many; CI runs the default.
// Suite FaultTrials: label faults.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "suite/core/exit_codes.h"
#include "suite/core/files.h"
#include "suite/store/run_file.h"
#include "tests/support/damage.h"
#include "tests/support/results.h"
#include "tests/support/subprocess.h"
#include "tests/support/sweeps.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::Child;
using test::TempDir;

// 2 attention kinds x 3 seeds, checkpoints every 10 steps: about 3 s on 2 ranks here.
std::string trial_sweep() {
  std::string s = test::tiny_sweep(60, "checkpoint_every = 10\n");
  s.replace(s.find("seeds = 2"), 9, "seeds = 3");
  return s;
}

std::vector<std::string> run_cmd(const fs::path& spec, const fs::path& out, int ranks = 2) {
  std::vector<std::string> argv = test::mpirun(ranks);
  for (const std::string& a : {test::lrbench(), std::string("run"), spec.string(), std::string("--out"), out.string(),
                               std::string("--data-cache"), std::string("none")})
    argv.push_back(a);
  return argv;
}

// What a crash or an abort prints; lrbench's own errors never do.
std::string unclear_message(const std::string& output) {
  for (const char* sign : {"terminate called", "Segmentation fault", "core dumped", "Assertion", "broken invariant",
                           "what():", "HDF5-DIAG"})
    if (output.find(sign) != std::string::npos) return sign;
  return "";
}

struct Tally {
  int trials = 0, lost = 0, duplicated = 0, silent = 0, unclear = 0, leftovers = 0, not_equal = 0;
  std::map<std::string, int> kinds;
  std::vector<std::string> problems;
  void problem(int trial, const std::string& kind, const std::string& what) {
    problems.push_back(fmt::format("trial {} ({}): {}", trial, kind, what));
  }
};

// The results folder after the last command of a trial, against the reference.
void check_folder(const fs::path& out, const std::map<std::string, RunRecord>& reference, int trial,
                  const std::string& kind, const std::map<fs::path, std::string>& damaged_bytes, Tally& tally) {
  std::map<std::string, int> seen;
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    if (is_temp_name(name)) {
      ++tally.leftovers;
      tally.problem(trial, kind, "temporary file left: " + e.path().string());
    }
  }
  for (const auto& e : fs::directory_iterator(out / "runs")) {
    const RunFileCheck check = read_run_file(e.path());
    if (!check.valid()) {
      ++tally.silent;
      tally.problem(trial, kind, "a damaged file is kept as finished: " + e.path().string() + " (" + check.reason + ")");
      continue;
    }
    if (auto it = damaged_bytes.find(e.path()); it != damaged_bytes.end() && read_file(e.path()) == it->second) {
      ++tally.silent;
      tally.problem(trial, kind, "the damaged bytes were accepted: " + e.path().string());
    }
    const RunRecord& rec = *check.record;
    ++seen[rec.key];
    if (e.path().filename() != rec.key + ".h5") tally.problem(trial, kind, "misnamed run file " + e.path().string());
    if (!reference.count(rec.key)) {
      ++tally.duplicated;
      tally.problem(trial, kind, "a run that is not in the sweep: " + rec.key);
      continue;
    }
    if (rec.status != RunStatus::Ok) {
      ++tally.lost;
      tally.problem(trial, kind, fmt::format("run {} ended {}: {}", rec.key.substr(0, 12), status_name(rec.status), rec.error));
      continue;
    }
    if (const std::string d = test::deterministic_difference(reference.at(rec.key), rec); !d.empty()) {
      ++tally.not_equal;
      tally.problem(trial, kind, "run " + rec.key.substr(0, 12) + " differs from the reference: " + d);
    }
  }
  for (const auto& [key, rec] : reference) {
    const int n = seen.count(key) ? seen.at(key) : 0;
    if (n == 0) {
      ++tally.lost;
      tally.problem(trial, kind, "run " + key.substr(0, 12) + " is missing");
    } else if (n > 1) {
      ++tally.duplicated;
      tally.problem(trial, kind, "run " + key.substr(0, 12) + " is there " + std::to_string(n) + " times");
    }
  }
  std::error_code ec;
  for (fs::directory_iterator it(out / "checkpoints", ec), end; !ec && it != end; it.increment(ec))
    tally.problem(trial, kind, "checkpoint left after the sweep finished: " + it->path().string());
}

// Starts the sweep and waits until both ranks are lrbench itself (signals can be taken).
std::map<int, pid_t> wait_for_ranks(const Child& job) {
  for (int i = 0; i < 400; ++i) {
    auto ranks = test::mpi_ranks_of(job.pid());
    if (ranks.size() == 2) return ranks;
    std::this_thread::sleep_for(25ms);
  }
  return {};
}

class FaultTrials : public ::testing::Test {
 protected:
  void SetUp() override {
    trials_ = std::getenv("LRB_FAULT_TRIALS") ? std::stoi(std::getenv("LRB_FAULT_TRIALS")) : 4;
    seed_ = std::getenv("LRB_FAULT_SEED") ? std::stoull(std::getenv("LRB_FAULT_SEED"))
                                          : static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
    std::printf("fault trials: %d, seed %llu (LRB_FAULT_SEED replays them)\n", trials_, static_cast<unsigned long long>(seed_));
    test::write_text(t_ / "sweep.toml", trial_sweep());
    const auto start = std::chrono::steady_clock::now();
    const auto ref = test::run(run_cmd(t_ / "sweep.toml", t_ / "reference"));
    ASSERT_EQ(ref.code, kExitDone) << ref.output;
    reference_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    reference_ = test::read_runs(t_ / "reference");
    ASSERT_EQ(reference_.size(), 6u);
  }

  TempDir t_;
  int trials_ = 4;
  std::uint64_t seed_ = 0;
  double reference_seconds_ = 0;
  std::map<std::string, RunRecord> reference_;
};

TEST_F(FaultTrials, EveryRunOnceEqualToTheReferenceNothingDamagedKeptEveryMessageClear) {
  std::mt19937_64 rng(seed_);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(std::uniform_int_distribution<std::size_t>(0, n - 1)(rng)); };
  const bool root = ::geteuid() == 0;
  const std::vector<std::string> kinds = {"kill", "signal", "disk-full", "damage"};
  Tally tally;
  for (int trial = 0; trial < trials_; ++trial) {
    const std::string kind = trial < 4 ? kinds[static_cast<std::size_t>(trial)] : kinds[pick(kinds.size())];
    const fs::path dir = t_ / ("trial-" + std::to_string(trial));
    const fs::path out = dir / "out";
    fs::create_directories(dir);
    std::string detail;
    std::map<fs::path, std::string> damaged_bytes;
    auto expect_clear = [&](const std::string& what, const std::string& output) {
      if (const std::string sign = unclear_message(output); !sign.empty()) {
        ++tally.unclear;
        tally.problem(trial, kind, what + " printed '" + sign + "':\n" + output);
      }
    };

    if (kind == "kill" || kind == "signal") {
      Child job(run_cmd(t_ / "sweep.toml", out));
      const auto ranks = wait_for_ranks(job);
      const double delay = uniform(0, reference_seconds_);
      std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      const int victim = static_cast<int>(pick(2));
      if (kind == "kill") {
        detail = fmt::format("SIGKILL to rank {} after {:.2f} s", victim, delay);
        if (ranks.count(victim)) ::kill(ranks.at(victim), SIGKILL);
        const int code = job.wait(120s);
        if (code == -1) tally.problem(trial, kind, "the job did not end within 120 s after a rank was killed");
      } else {
        const int sig = pick(2) ? SIGTERM : SIGUSR1;
        const bool both = pick(2) == 1;
        detail = fmt::format("{} to {} after {:.2f} s", sig == SIGTERM ? "SIGTERM" : "SIGUSR1",
                             both ? "both ranks" : "rank " + std::to_string(victim), delay);
        for (const auto& [r, pid] : ranks)
          if (both || r == victim) ::kill(pid, sig);
        const int code = job.wait(120s);
        expect_clear("the stopped sweep", job.output());
        if (code != kExitDone && code != kExitStopped)
          tally.problem(trial, kind, fmt::format("a stopped sweep exited {} (0 or 3 expected):\n{}", code, job.output()));
      }
    } else if (kind == "disk-full") {
      // A tmpfs of a random size as the results folder: the disk fills at a random point.
      const int kib = static_cast<int>(uniform(8, 400));
      fs::create_directories(out);
      bool mounted = false;
      if (root) mounted = ::mount("tmpfs", out.c_str(), "tmpfs", 0, fmt::format("size={}k", kib).c_str()) == 0;
      std::vector<std::string> argv = run_cmd(t_ / "sweep.toml", out);
      // Without root: a file size limit, which fails writes the same way; on the ranks only,
      // since mpirun's PMIx server writes its own shared-memory files and would die of it.
      if (!mounted)
        argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(test::mpirun(2).size()),
                    {"/bin/bash", "-c", fmt::format("ulimit -f {}; trap '' XFSZ; exec \"$@\"", kib), "bash"});
      detail = fmt::format("{} of {} KiB", mounted ? "a tmpfs" : "a file size limit", kib);
      const auto full = test::run(argv, 300s);
      expect_clear("the sweep on a full disk", full.output);
      if (full.code != kExitDone && full.code != kExitInternal)
        tally.problem(trial, kind, fmt::format("a full disk gave exit {} (0 or 1 expected):\n{}", full.code, full.output));
      if (full.code == kExitInternal && full.output.find("No space left on device") == std::string::npos &&
          full.output.find("File too large") == std::string::npos) {
        ++tally.unclear;
        tally.problem(trial, kind, "a full disk failed without saying so:\n" + full.output);
      }
      if (mounted) {  // room again: the same files on a real disk
        const fs::path kept = dir / "kept";
        fs::copy(out, kept, fs::copy_options::recursive);
        ::umount(out.c_str());
        fs::remove_all(out);
        fs::rename(kept, out);
      }
    } else {  // damage: a finished folder, one run file damaged at a random place
      fs::copy(t_ / "reference", out, fs::copy_options::recursive);
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(out / "runs")) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      const fs::path victim = files[pick(files.size())];
      const auto size = fs::file_size(victim);
      const std::size_t how = pick(3);
      if (how == 0) {
        const auto offset = static_cast<std::uint64_t>(uniform(0, static_cast<double>(size)));
        test::flip_byte(victim, std::min<std::uint64_t>(offset, size - 1), static_cast<unsigned char>(1u << pick(8)));
        detail = fmt::format("a flipped bit at byte {} of {}", offset, size);
      } else if (how == 1) {
        const auto keep = static_cast<std::uintmax_t>(uniform(0, static_cast<double>(size)));
        fs::resize_file(victim, keep);
        detail = fmt::format("cut to {} of {} bytes", keep, size);
      } else {
        std::string bytes = read_file(victim);
        const std::size_t page = pick(std::max<std::size_t>(1, bytes.size() / 4096));
        std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(page * 4096),
                  bytes.begin() + static_cast<std::ptrdiff_t>(std::min(bytes.size(), page * 4096 + 4096)), '\0');
        std::ofstream(victim, std::ios::binary | std::ios::trunc) << bytes;
        detail = fmt::format("page {} zeroed", page);
      }
      damaged_bytes[victim] = read_file(victim);
    }

    // The same command again completes the sweep.
    const auto again = test::run(run_cmd(t_ / "sweep.toml", out), 300s);
    expect_clear("the rerun", again.output);
    if (again.code != kExitDone) tally.problem(trial, kind, fmt::format("the rerun exited {}:\n{}", again.code, again.output));
    if (kind == "damage" && again.output.find("is damaged") == std::string::npos) {
      ++tally.silent;
      tally.problem(trial, kind, "the rerun did not name the damaged file:\n" + again.output);
    }
    check_folder(out, reference_, trial, kind, damaged_bytes, tally);
    ++tally.trials;
    ++tally.kinds[kind];
    std::printf("trial %d: %s (%s)\n", trial, kind.c_str(), detail.c_str());
    std::fflush(stdout);
    fs::remove_all(dir);
  }

  std::string kinds_text;
  for (const auto& [k, n] : tally.kinds) kinds_text += fmt::format("{}{} {}", kinds_text.empty() ? "" : ", ", n, k);
  const std::string summary = fmt::format(
      "{} trials ({}; seed {}): {} lost, {} duplicated, {} silent corruptions, {} unclear messages, {} temporary files "
      "left, {} runs unequal to the reference\n",
      tally.trials, kinds_text, seed_, tally.lost, tally.duplicated, tally.silent, tally.unclear, tally.leftovers, tally.not_equal);
  std::printf("%s", summary.c_str());
  if (const char* path = std::getenv("LRB_FAULT_SUMMARY")) {
    std::string text = "# Fault trials\n\n" + summary;
    for (const auto& p : tally.problems) text += "\n- " + p;
    test::write_text(path, text + "\n");
  }
  for (const auto& p : tally.problems) ADD_FAILURE() << p;
}

}  // namespace
}  // namespace lrb
