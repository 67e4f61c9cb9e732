#pragma once
// SIGTERM, SIGUSR1 and SIGINT only set a flag (async-signal-safe); the runner polls it at
// step boundaries and inside long evaluation loops, checkpoints, and exits with
// kExitStopped. A second SIGINT while a stop is pending ends the process at once (the
// default action), for a user who does not want to wait for the checkpoint. A signal that
// was ignored when the process started (SIGINT for a shell's background job) stays ignored.
//
// `lrbench` installs the handlers before anything else runs (before the libraries' static
// initialisers: see suite/cli/main.cpp), so a signal during start-up is a stop like any
// other, not a kill. Commands other than `run` give the signals back their default action.
namespace lrb {
void install_stop_handlers();
// Restores the default actions and, when a stop signal arrived meanwhile, raises it again
// so that it acts as if no handler had been installed.
void release_stop_handlers();
bool stop_requested();
int stop_signal();        // the signal that asked for the stop, 0 if none
void request_stop(int signal_number);  // for tests and for a rank told by another rank
void clear_stop_request();             // for tests
}  // namespace lrb
