#include <signal.h>

#include <initializer_list>

#include "suite/cli/app.h"
#include "suite/core/stop_flag.h"

namespace {
// Runs before the shared libraries' static initialisers (LibTorch's take most of a second):
// a SIGTERM, SIGUSR1 or SIGINT from then on is a stop request (exit 3), not a kill. The
// launcher (suite/cli/launcher.cpp) blocked them before this program was even loaded; one
// that came meanwhile is delivered to the handler as they are unblocked.
void install_early(int, char**, char**) {
  lrb::install_stop_handlers();
  sigset_t stops;
  sigemptyset(&stops);
  for (int sig : {SIGTERM, SIGUSR1, SIGINT}) sigaddset(&stops, sig);
  sigprocmask(SIG_UNBLOCK, &stops, nullptr);
}
__attribute__((section(".preinit_array"), used)) void (*const lrb_preinit)(int, char**, char**) = &install_early;
}  // namespace

int main(int argc, char** argv) { return lrb::cli_main(argc, argv); }
