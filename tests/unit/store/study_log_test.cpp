// DIR/study.json: the time a sequential study has spent. Whatever the wall clock does
// during a session, what lrbench writes is what it reads back.
#include "suite/store/study_log.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "suite/core/errors.h"

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

// A study's identity (issue 66): settled once per folder, random for a new study, kept by
// every later session; a folder whose study began without one keeps its seeds (""); a
// replay by name only where nothing has been seen; never changed.
TEST(StudyLog, AStudysIdentityIsSettledOnceAndNewFoldersGetTheirOwn) {
  test::TempDir a, b, legacy, seen, named;
  const std::string id = settle_study_id(a.path(), "");
  EXPECT_EQ(id.size(), 16u);
  EXPECT_EQ(study_id_problem(id), "");
  EXPECT_EQ(settle_study_id(a.path(), ""), id) << "settled once";
  EXPECT_NE(settle_study_id(b.path(), ""), id) << "another folder, another study";
  {
    StudyClock clock(a.path());
    clock.ended("max reached");
  }
  EXPECT_EQ(read_study_log(a.path()).study_id, id) << "sessions keep it";
  EXPECT_THROW(settle_study_id(a.path(), "abc"), UserError);
  EXPECT_EQ(settle_study_id(a.path(), id), id);
  {
    StudyClock clock(legacy.path());  // a study that began before identities
  }
  EXPECT_EQ(settle_study_id(legacy.path(), ""), "");
  EXPECT_THROW(settle_study_id(legacy.path(), "abc"), UserError);
  std::filesystem::create_directories(seen.path() / "runs");
  test::write_text(seen.path() / "runs" / "k.h5", "x");  // runs drawn before identities
  EXPECT_EQ(settle_study_id(seen.path(), ""), "");
  EXPECT_EQ(settle_study_id(named.path(), "5eed"), "5eed");
  for (const char* bad : {"", "5EED", "x", "0123456789abcdef0123456789abcdef0"}) EXPECT_NE(study_id_problem(bad), "") << bad;
  EXPECT_THROW(settle_study_id(test::TempDir().path(), "not-hex"), UserError);
}

TEST(StudyLog, ASessionEndingBeforeItStartsIsRefusedByTheReader) {
  StudySession s{"host/1/2", 100, 50};
  EXPECT_NE(s.problem(), "");
  s.end = 150;
  EXPECT_EQ(s.problem(), "");
}

}  // namespace
}  // namespace lrb
