// The stop handlers: SIGTERM, SIGUSR1 and SIGINT set the flag; a second SIGINT while a stop
// is pending ends the process at once; released handlers act as if never installed.
// Each case runs in a forked child, so the test process keeps its own dispositions.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

#include "suite/core/stop_flag.h"

namespace lrb {
namespace {

// The wait status of a child that runs `body` (only async-signal-safe calls) and exits.
int status_of(const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return status;
}

TEST(StopFlag, EachStopSignalSetsTheFlag) {
  for (const int sig : {SIGTERM, SIGUSR1, SIGINT}) {
    const int status = status_of([sig] {
      clear_stop_request();
      install_stop_handlers();
      raise(sig);
      return stop_requested() && stop_signal() == sig ? 3 : 10;
    });
    ASSERT_TRUE(WIFEXITED(status)) << sig;
    EXPECT_EQ(WEXITSTATUS(status), 3) << sig;
  }
}

TEST(StopFlag, ASecondSigintEndsTheProcessAtOnce) {
  const int status = status_of([] {
    clear_stop_request();
    install_stop_handlers();
    raise(SIGINT);
    if (!stop_requested()) return 10;
    raise(SIGINT);
    return 3;  // not reached: the default action ends the process
  });
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGINT);
}

TEST(StopFlag, ReleasedHandlersDeliverAPendingStopWithItsDefaultAction) {
  const int status = status_of([] {
    clear_stop_request();
    install_stop_handlers();
    raise(SIGTERM);      // during start-up of a command that does not checkpoint
    release_stop_handlers();  // raises it again, now with the default action
    return 3;
  });
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

TEST(StopFlag, ASigintIgnoredAtStartStaysIgnored) {
  const int status = status_of([] {
    signal(SIGINT, SIG_IGN);  // as a shell starts a background job
    clear_stop_request();
    install_stop_handlers();
    raise(SIGINT);
    if (stop_requested()) return 10;
    raise(SIGTERM);
    return stop_signal() == SIGTERM ? 3 : 11;
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
}

}  // namespace
}  // namespace lrb
