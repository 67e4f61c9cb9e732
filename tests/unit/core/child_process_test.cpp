// The one way lrbench starts another program (suite/core/child_process.h): what the child
// is given, what comes back, and that it never outlives a deadline or its owner.
#include "suite/core/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace lrb {
namespace {

ChildExit run(ChildOptions options, std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
  int error = 0;
  auto child = ChildProcess::start(options, &error);
  EXPECT_TRUE(child.has_value()) << "errno " << error;
  if (!child) return {};
  return child->wait(timeout);
}

ChildOptions shell(const std::string& script, ChildOutput output = ChildOutput::capture) {
  ChildOptions o;
  o.argv = {"/bin/sh", "-c", script};
  o.output = output;
  return o;
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

TEST(ChildProcess, OutputAndErrorAreGatheredApartOrTogether) {
  const auto apart = run(shell("echo out; echo err >&2; exit 7"));
  EXPECT_EQ(apart.out, "out\n");
  EXPECT_EQ(apart.err, "err\n");
  EXPECT_EQ(apart.exit_code, 7);
  EXPECT_EQ(apart.status(), 7);
  const auto merged = run(shell("echo one; echo two >&2; echo three", ChildOutput::capture_merged));
  EXPECT_EQ(merged.out, "one\ntwo\nthree\n");
  EXPECT_EQ(merged.err, "");
}

TEST(ChildProcess, ArgumentsReachTheProgramUnparsed) {
  ChildOptions o;
  o.argv = {"/bin/echo", "$HOME; rm -rf /", "`id`"};
  o.output = ChildOutput::capture;
  EXPECT_EQ(run(o).out, "$HOME; rm -rf / `id`\n");
}

TEST(ChildProcess, StandardInputIsNeverTheTerminal) {
  // cat ends at once on /dev/null; with an inherited terminal or pipe it would wait.
  const auto r = run(shell("cat; echo done"), std::chrono::seconds(20));
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, "done\n");
}

TEST(ChildProcess, ASignalIsReportedAsTheShellWould) {
  const auto r = run(shell("kill -TERM $$"));
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_EQ(r.status(), 128 + SIGTERM);
}

TEST(ChildProcess, TheDeadlineKillsTheChildAndItsCapturedOutputIsKept) {
  const auto started = std::chrono::steady_clock::now();
  // The grandchild (sleep) keeps the pipe open after its parent is killed: the wait must not hang on it.
  const auto r = run(shell("echo before; sleep 30; echo after"), std::chrono::milliseconds(300));
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.out, "before\n");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
}

TEST(ChildProcess, TheEnvironmentIsChangedForTheChildOnly) {
  ::setenv("LRB_CHILD_TEST_KEEP", "kept", 1);
  ::setenv("LRB_CHILD_TEST_DROP", "present", 1);
  auto o = shell("echo ${LRB_CHILD_TEST_KEEP}-${LRB_CHILD_TEST_DROP:-unset}-${LRB_CHILD_TEST_NEW}");
  o.environment = {{"LRB_CHILD_TEST_DROP", std::nullopt}, {"LRB_CHILD_TEST_NEW", "new value"}};
  EXPECT_EQ(run(o).out, "kept-unset-new value\n");
  EXPECT_STREQ(::getenv("LRB_CHILD_TEST_DROP"), "present");
  EXPECT_EQ(::getenv("LRB_CHILD_TEST_NEW"), nullptr);
  ::unsetenv("LRB_CHILD_TEST_KEEP");
  ::unsetenv("LRB_CHILD_TEST_DROP");
}

TEST(ChildProcess, OutputToAFileInTheWorkingFolder) {
  const auto folder = std::filesystem::temp_directory_path() / ("lrb-child-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  auto o = shell("pwd; echo oops >&2", ChildOutput::to_file);
  o.working_folder = folder.string();
  o.output_file = "child.log";
  const auto r = run(o);
  EXPECT_EQ(r.status(), 0);
  std::ifstream log(folder / "child.log");
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_EQ(text.str(), std::filesystem::canonical(folder).string() + "\noops\n");
  EXPECT_EQ(std::filesystem::status(folder / "child.log").permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::remove_all(folder);
}

TEST(ChildProcess, AProgramThatIsNotThereIsAnErrorNumber) {
  ChildOptions o;
  o.argv = {"lrbench-no-such-program-anywhere"};
  int error = 0;
  EXPECT_FALSE(ChildProcess::start(o, &error).has_value());
  EXPECT_EQ(error, ENOENT);
  o.argv = {};
  EXPECT_FALSE(ChildProcess::start(o, &error).has_value());
  EXPECT_EQ(error, EINVAL);
  auto bad_folder = shell("true");
  bad_folder.working_folder = "/nonexistent/folder";
  EXPECT_FALSE(ChildProcess::start(bad_folder, &error).has_value());
  EXPECT_EQ(error, ENOENT);
}

TEST(ChildProcess, CapturedOutputIsBoundedAndTheChildStillEnds) {
  auto o = shell("head -c 1000000 /dev/zero; echo end >&2");
  o.capture_limit = 1000;
  const auto r = run(o, std::chrono::seconds(20));
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_EQ(r.err, "end\n");
  EXPECT_EQ(r.status(), 0);
}

TEST(ChildProcess, TickRunsWhileTheChildDoesAndItsOwnGroupIsItsOwn) {
  auto o = shell("sleep 0.4", ChildOutput::inherit);
  o.own_process_group = true;
  int error = 0;
  auto child = ChildProcess::start(o, &error);
  ASSERT_TRUE(child.has_value());
  EXPECT_EQ(::getpgid(child->pid()), child->pid());
  int ticks = 0;
  const auto r = child->wait(std::nullopt, [&] { ++ticks; });
  EXPECT_EQ(r.status(), 0);
  EXPECT_GE(ticks, 3);
}

TEST(ChildProcess, AChildNeverWaitedForIsKilledWithItsOwner) {
  pid_t pid = -1;
  {
    int error = 0;
    auto child = ChildProcess::start(shell("exec sleep 30", ChildOutput::inherit), &error);
    ASSERT_TRUE(child.has_value());
    pid = child->pid();
    EXPECT_TRUE(alive(pid));
  }
  EXPECT_FALSE(alive(pid));  // killed and reaped: not even a zombie
}

}  // namespace
}  // namespace lrb
