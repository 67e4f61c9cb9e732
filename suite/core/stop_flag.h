#pragma once
// SIGTERM and SIGUSR1 only set a flag (async-signal-safe); the runner polls it at step
// boundaries and inside long evaluation loops, checkpoints, and exits with kExitStopped.
namespace lrb {
void install_stop_handlers();
bool stop_requested();
int stop_signal();        // the signal that asked for the stop, 0 if none
void request_stop(int signal_number);  // for tests and for a rank told by another rank
void clear_stop_request();             // for tests
}  // namespace lrb
