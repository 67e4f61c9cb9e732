#include "suite/core/call_watch.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "suite/core/stop_flag.h"

namespace lrb {
namespace {

using Clock = std::chrono::steady_clock;

struct Watch {
  std::mutex mutex;
  std::condition_variable changed;
  bool thread_started = false;
  double limit = 0;
  double longest = 0;  // seconds, of the calls that returned
  // The call in progress.
  bool active = false;
  std::string what;
  StuckAction on_stuck;
  Clock::time_point started;
  std::optional<Clock::time_point> stop_seen;
};

Watch& watch() {
  static Watch* w = new Watch;  // never destroyed: the watch thread may outlive main's statics
  return *w;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string seconds_text(double s) {
  char text[64];
  std::snprintf(text, sizeof text, s < 10 ? "%.1f s" : "%.0f s", s);
  return text;
}

// Holds the lock while the action runs and the process ends, so that a call that returns
// meanwhile cannot go on as if nothing had happened.
[[noreturn]] void end_stuck_call(Watch& w, std::unique_lock<std::mutex>&, bool stopped, const std::string& why) {
  int code = 1;
  try {
    code = w.on_stuck ? w.on_stuck(stopped, why) : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lrbench: %s; recording it failed: %s\n", why.c_str(), e.what());
  }
  std::fflush(stderr);
  std::fflush(stdout);
  std::_Exit(code);
}

void watch_loop() {
  Watch& w = watch();
  std::unique_lock<std::mutex> lock(w.mutex);
  for (;;) {
    w.changed.wait_for(lock, std::chrono::milliseconds(50));
    if (!w.active) continue;
    const double elapsed = seconds_since(w.started);
    if (stop_requested()) {
      if (!w.stop_seen) w.stop_seen = Clock::now();
      const double grace = std::max(kStopGraceSeconds, 3 * w.longest);
      if (seconds_since(*w.stop_seen) >= grace)
        end_stuck_call(w, lock, true,
                       w.what + " did not return within " + seconds_text(grace) + " of the stop signal (it had run " +
                           seconds_text(elapsed) + "); a model call cannot be interrupted, so the process ends");
    }
    if (w.limit > 0 && elapsed >= w.limit)
      end_stuck_call(w, lock, false,
                     w.what + " did not return within " + seconds_text(w.limit) +
                         " (step_time_limit): a model call cannot be interrupted, so the process ends");
  }
}

}  // namespace

void set_call_time_limit(double seconds) {
  std::lock_guard<std::mutex> lock(watch().mutex);
  watch().limit = std::max(0.0, seconds);
}

double call_time_limit() {
  std::lock_guard<std::mutex> lock(watch().mutex);
  return watch().limit;
}

double stop_grace_seconds() {
  std::lock_guard<std::mutex> lock(watch().mutex);
  return std::max(kStopGraceSeconds, 3 * watch().longest);
}

WatchedCall::WatchedCall(std::string what, StuckAction on_stuck) {
  Watch& w = watch();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (w.active) return;
  if (!w.thread_started) {
    std::thread(watch_loop).detach();
    w.thread_started = true;
  }
  owner_ = true;
  w.active = true;
  w.what = std::move(what);
  w.on_stuck = std::move(on_stuck);
  w.started = Clock::now();
  w.stop_seen.reset();
}

WatchedCall::~WatchedCall() {
  if (!owner_) return;
  Watch& w = watch();
  std::lock_guard<std::mutex> lock(w.mutex);
  w.longest = std::max(w.longest, seconds_since(w.started));
  w.active = false;
  w.on_stuck = nullptr;
}

}  // namespace lrb
