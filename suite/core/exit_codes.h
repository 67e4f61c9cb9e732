#pragma once
// The process exit codes, documented in docs/sweep-file.md ("Exit codes").
namespace lrb {
enum ExitCode : int {
  kExitDone = 0,         // every run finished ok (or was already finished)
  kExitInternal = 1,     // a bug or an environment failure
  kExitUsage = 2,        // bad command line or configuration; nothing ran
  kExitStopped = 3,      // stopped by SIGTERM/SIGUSR1 with checkpoints; run again to resume
  kExitFailedRuns = 4,   // the sweep finished, but some runs failed (recorded with their reason)
  kExitRegressed = 5,    // compare/ab --fail-on: a figure regressed (regressed), or moved (moved)
};
}  // namespace lrb
