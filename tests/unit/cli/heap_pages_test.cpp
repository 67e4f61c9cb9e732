// The launcher asks glibc to back lrbench's heap with transparent huge pages
// (suite/cli/launcher.cpp): GLIBC_TUNABLES gets glibc.malloc.hugetlb=1 in front, so a value
// of the user's own comes after it and wins, and the value an lrbench passed to the ranks it
// started is kept as it is. doctor and every run's provenance say what the heap had.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "suite/core/environment.h"
#include "suite/core/exit_codes.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

std::string heap_line(const std::vector<std::string>& env) {
  const auto r = test::run({test::lrbench(), "doctor"}, std::chrono::seconds(180), env);
  EXPECT_EQ(r.code, kExitDone) << r.output;
  const auto at = r.output.find("heap pages");
  return at == std::string::npos ? r.output : r.output.substr(at, r.output.find('\n', at) - at);
}

TEST(HeapPages, TheLauncherAsksForHugePagesAndTheUsersTunablesWin) {
  // putenv of a bare name removes it: the tester's own tunables are not the test's.
  EXPECT_NE(heap_line({"GLIBC_TUNABLES"}).find("GLIBC_TUNABLES \"glibc.malloc.hugetlb=1\""), std::string::npos)
      << heap_line({"GLIBC_TUNABLES"});
  const std::string theirs = heap_line({"GLIBC_TUNABLES=glibc.malloc.hugetlb=0"});
  EXPECT_NE(theirs.find("GLIBC_TUNABLES \"glibc.malloc.hugetlb=1:glibc.malloc.hugetlb=0\""), std::string::npos) << theirs;
  // What a parent lrbench set (--ranks, Slurm) is not prefixed again.
  const std::string parents = heap_line({"GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=9"});
  EXPECT_NE(parents.find("GLIBC_TUNABLES \"glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=9\""), std::string::npos) << parents;
}

TEST(HeapPages, TheProvenanceNamesTheSystemsModeAndTheTunables) {
  const char* before = std::getenv("GLIBC_TUNABLES");
  const std::string kept = before != nullptr ? before : "";
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
  const nlohmann::json heap = heap_pages();
  ::unsetenv("GLIBC_TUNABLES");
  const nlohmann::json unset = heap_pages();
  if (before != nullptr) ::setenv("GLIBC_TUNABLES", kept.c_str(), 1);
  EXPECT_EQ(heap["glibc_tunables"], "glibc.malloc.hugetlb=1");
  EXPECT_EQ(unset["glibc_tunables"], "");
  const std::string mode = heap["transparent_huge_pages"];
  EXPECT_TRUE(mode == "always" || mode == "madvise" || mode == "never" || mode.empty()) << mode;
}

}  // namespace
}  // namespace lrb
