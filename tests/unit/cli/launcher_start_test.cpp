// The launcher blocks the stop signals with its very first system call, before the C
// library's start-up code (suite/cli/launcher.cpp): a SIGTERM a moment after the exec is a
// stop, not a kill. Traced from the exec to its first system call.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "tests/support/subprocess.h"

namespace lrb {
namespace {

#if defined(__x86_64__)
TEST(LauncherStart, ItsFirstSystemCallBlocksTheStopSignals) {
  const std::string launcher = test::lrbench();
  const pid_t child = ::fork();
  if (child == 0) {
    ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    ::execl(launcher.c_str(), launcher.c_str(), "--version", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSTOPPED(status)) << "not stopped after its exec (ptrace refused?), status " << status;
  ASSERT_EQ(::ptrace(PTRACE_SYSCALL, child, nullptr, nullptr), 0);  // on to its first system call
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  user_regs_struct regs{};
  const bool read = WIFSTOPPED(status) && ::ptrace(PTRACE_GETREGS, child, nullptr, &regs) == 0;
  errno = 0;
  const long set = read ? ::ptrace(PTRACE_PEEKDATA, child, regs.rsi, nullptr) : 0;
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(read);
  EXPECT_EQ(static_cast<long>(regs.orig_rax), SYS_rt_sigprocmask) << "the first system call was " << regs.orig_rax;
  EXPECT_EQ(regs.rdi, static_cast<unsigned long long>(SIG_BLOCK));
  for (const int sig : {SIGTERM, SIGUSR1, SIGINT}) EXPECT_TRUE((set >> (sig - 1)) & 1) << "signal " << sig << " not blocked";
}
#endif

}  // namespace
}  // namespace lrb
