// DIR/study.json: the time a sequential study has spent. Whatever the wall clock does
// during a session, what lrbench writes is what it reads back.
#include "suite/store/study_log.h"

#include <gtest/gtest.h>

#include "tests/support/subprocess.h"

namespace lrb {
namespace {

// The wall clock set back an hour after every reading (NTP stepping, a suspended VM): a
// session's length comes from the monotonic clock, so it never ends before it began.
TEST(StudyLog, AWallClockSteppedBackNeverWritesALogItRefuses) {
  test::TempDir dir;
  double wall = 1.0e9;
  const auto stepping_back = [&wall] {
    const double now = wall;
    wall -= 3600;
    return now;
  };
  {
    StudyClock clock(dir.path(), stepping_back);
    EXPECT_GE(clock.beat(), 0.0);
    clock.ended("every claim decided");
  }
  const StudyLog log = read_study_log(dir.path());  // readable: the folder is not stuck
  ASSERT_EQ(log.sessions.size(), 1u);
  EXPECT_EQ(log.sessions[0].start, 1.0e9);
  EXPECT_GE(log.sessions[0].end, log.sessions[0].start);
  EXPECT_EQ(log.ended, "every claim decided");
  StudyClock next(dir.path(), stepping_back);
  EXPECT_EQ(read_study_log(dir.path()).sessions.size(), 2u);
  EXPECT_GE(next.beat(), 0.0);
}

TEST(StudyLog, ASessionEndingBeforeItStartsIsRefusedByTheReader) {
  StudySession s{"host/1/2", 100, 50};
  EXPECT_NE(s.problem(), "");
  s.end = 150;
  EXPECT_EQ(s.problem(), "");
}

}  // namespace
}  // namespace lrb
