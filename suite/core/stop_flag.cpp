#include "suite/core/stop_flag.h"

#include <csignal>

namespace lrb {
namespace {
volatile std::sig_atomic_t g_stop_signal = 0;
constexpr int kStopSignals[] = {SIGTERM, SIGUSR1, SIGINT};

extern "C" void on_stop_signal(int sig) {
  if (sig == SIGINT && g_stop_signal != 0) {
    // Asked twice: stop now, without the checkpoint (sigaction and raise are async-signal-safe).
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGINT, &dfl, nullptr);
    raise(SIGINT);
    return;
  }
  g_stop_signal = sig;
}

// A stop signal that is ignored (the process started so: shells start background jobs with
// SIGINT ignored, so that a Ctrl-C meant for the script does not reach them) stays ignored.
bool ignored(int sig) {
  struct sigaction now {};
  return sigaction(sig, nullptr, &now) == 0 && now.sa_handler == SIG_IGN;
}
}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : kStopSignals)
    if (!ignored(sig)) sigaction(sig, &sa, nullptr);
}

void release_stop_handlers() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig : kStopSignals)
    if (!ignored(sig)) sigaction(sig, &dfl, nullptr);
  if (const int sig = g_stop_signal; sig != 0) raise(sig);
}

bool stop_requested() { return g_stop_signal != 0; }
int stop_signal() { return g_stop_signal; }
void request_stop(int signal_number) { g_stop_signal = signal_number; }
void clear_stop_request() { g_stop_signal = 0; }

}  // namespace lrb
