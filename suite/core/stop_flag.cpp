#include "suite/core/stop_flag.h"

#include <csignal>

namespace lrb {
namespace {
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }
}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);
}

bool stop_requested() { return g_stop_signal != 0; }
int stop_signal() { return g_stop_signal; }
void request_stop(int signal_number) { g_stop_signal = signal_number; }
void clear_stop_request() { g_stop_signal = 0; }

}  // namespace lrb
