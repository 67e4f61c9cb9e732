#pragma once
// A model call that never returns (a TorchScript forward in an endless loop): LibTorch cannot
// interrupt it, and a stop signal only sets a flag it never reads. One thread watches the call
// in progress; when a stop signal has waited for it longer than the grace, or the call has run
// past the step time limit, the watch runs the call's `on_stuck` (which records what it can:
// the run stopped, or failed with the reason) and ends the process with the code it returns,
// since the thread inside the call can be neither stopped nor reused.
#include <functional>
#include <string>

namespace lrb {

// The longest a model call may take ([sweep] step_time_limit, in seconds; 0: no limit), for
// the whole process: set once where the sweep is read.
void set_call_time_limit(double seconds);
double call_time_limit();

// A stop waits at least this long for the call in progress to return (a normal step ends,
// and the run checkpoints as usual); longer after slower calls: 3 x the longest call seen.
inline constexpr double kStopGraceSeconds = 5;
double stop_grace_seconds();

// `stopped`: a stop signal waited past the grace (else: the time limit passed). `why`: what
// happened, in words ("training step 3 did not return within 2 s (step_time_limit)"). Returns
// the process's exit code. Runs on the watch thread while the call's own thread is stuck.
using StuckAction = std::function<int(bool stopped, const std::string& why)>;

// Watches one call from construction to destruction; calls do not nest (an inner one is not
// watched: the outer one already is).
class WatchedCall {
 public:
  WatchedCall(std::string what, StuckAction on_stuck);
  ~WatchedCall();
  WatchedCall(const WatchedCall&) = delete;
  WatchedCall& operator=(const WatchedCall&) = delete;

 private:
  bool owner_ = false;
};

}  // namespace lrb
