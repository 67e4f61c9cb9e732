// The BLAS core the launcher chooses (suite/cli/launcher.cpp, suite/cli/blas_check.cpp):
// where OpenBLAS fell back to kernels older than the processor, a better core is set only
// after it passed a self-test in a child process; the user's OPENBLAS_CORETYPE wins; the
// verdict is cached per host and library and a damaged cache is checked again. On machines
// whose OpenBLAS knows the processor, LRB_FAULT_BLAS_FALLBACK makes the check report a
// fallback, so the decision and the self-test (real, on the real library) run everywhere.
#include <fcntl.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <vector>

#include "suite/core/environment.h"
#include "suite/core/exit_codes.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

std::string blas_check() { return (fs::path(test::lrbench()).parent_path() / "lrbench-blas-check").string(); }

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The better core this processor allows over SSE3's, or "" (then nothing can be chosen).
std::string better_than_prescott() {
  return better_blas_core("Prescott", __builtin_cpu_supports("avx2"), __builtin_cpu_supports("avx512f"));
}

class BlasCore : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto found = test::run({blas_check()}, std::chrono::seconds(60));
    if (found.output.find("core=\n") != std::string::npos || found.code != 0)
      GTEST_SKIP() << "the BLAS LibTorch loads is not OpenBLAS: nothing to choose (" << found.output << ")";
    if (better_than_prescott().empty()) GTEST_SKIP() << "this processor has no AVX2: SSE3 kernels are the best it allows";
  }
  // lrbench doctor with a cache folder of its own and these variables.
  test::Result doctor(const std::vector<std::string>& vars) {
    // The tester's own choice is not the test's (putenv of a bare name removes it).
    std::vector<std::string> env = {"OPENBLAS_CORETYPE", "LRB_BLAS_CORE_CHOICE", "LRB_BLAS_AUTO",
                                    "XDG_CACHE_HOME=" + cache_home_.path().string()};
    env.insert(env.end(), vars.begin(), vars.end());
    return test::run({test::lrbench(), "doctor"}, std::chrono::seconds(180), env);
  }
  // The launcher's verdict (beside it, doctor's matmul peak cache).
  fs::path cache_file() const {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(cache_home_.path() / "lrbench", ec))
      if (e.path().filename().string().rfind("blas-core-", 0) == 0 && e.path().extension() == ".txt") return e.path();
    return {};
  }
  std::string line_of(const std::string& output, const std::string& start) {
    const auto at = output.find(start);
    if (at == std::string::npos) return "";
    return output.substr(at, output.find('\n', at) - at);
  }
  test::TempDir cache_home_;
};

TEST(BlasCheck, ProductsOfAwkwardShapesPassAndAWrongOneIsNamed) {
  const auto ok = test::run({blas_check(), "--test"}, std::chrono::seconds(60));
  if (ok.output.find("error=") != std::string::npos) GTEST_SKIP() << "no libblas.so.3 here: " << ok.output;
  ASSERT_EQ(ok.code, 0) << ok.output;
  EXPECT_NE(ok.output.find("test=ok 56 products"), std::string::npos) << ok.output;
  const auto wrong = test::run({blas_check(), "--test"}, std::chrono::seconds(60), {"LRB_FAULT_BLAS_CHECK=wrong"});
  EXPECT_EQ(wrong.code, 1) << wrong.output;
  EXPECT_NE(wrong.output.find("test=wrong sgemm 1x1x1"), std::string::npos) << wrong.output;
  EXPECT_EQ(test::run({blas_check(), "--frobnicate"}, std::chrono::seconds(60)).code, 2);
}

TEST_F(BlasCore, AFallbackIsReplacedByABetterCoreThatPassedItsSelfTestAndTheVerdictIsCached) {
  const std::string better = better_than_prescott();
  const auto first = doctor({"LRB_FAULT_BLAS_FALLBACK=Prescott"});
  ASSERT_EQ(first.code, kExitDone) << first.output;
  EXPECT_NE(line_of(first.output, "BLAS core").find("(chosen by lrbench)"), std::string::npos) << first.output;
  EXPECT_NE(line_of(first.output, "BLAS choice").find("auto: OpenBLAS fell back to Prescott on this processor; " + better +
                                                      " passed a self-test"),
            std::string::npos)
      << first.output;
  EXPECT_EQ(line_of(first.output, "BLAS choice").find("cached"), std::string::npos) << first.output;
  const std::string cached = read_all(cache_file());
  EXPECT_NE(cached.find("core=" + better + "\n"), std::string::npos) << cached;
  // The second start takes the verdict from the cache: the same core, and says where from.
  const auto second = doctor({"LRB_FAULT_BLAS_FALLBACK=Prescott"});
  EXPECT_EQ(line_of(second.output, "BLAS core"), line_of(first.output, "BLAS core")) << second.output;
  EXPECT_NE(line_of(second.output, "BLAS choice").find("[cached in " + cache_file().string() + "]"), std::string::npos)
      << second.output;
}

TEST_F(BlasCore, ACoreThatComputesWrongOrCrashesIsNotChosen) {
  for (const std::string fault : {"wrong", "crash"}) {
    SCOPED_TRACE(fault);
    fs::remove_all(cache_home_.path() / "lrbench");
    const auto r = doctor({"LRB_FAULT_BLAS_FALLBACK=Prescott", "LRB_FAULT_BLAS_CHECK=" + fault});
    ASSERT_EQ(r.code, kExitDone) << r.output;
    EXPECT_EQ(line_of(r.output, "BLAS core").find("chosen by lrbench"), std::string::npos) << r.output;
    const std::string choice = line_of(r.output, "BLAS choice");
    EXPECT_NE(choice.find("kept Prescott: " + better_than_prescott() + " failed its self-test: "), std::string::npos) << r.output;
    EXPECT_NE(choice.find(fault == "wrong" ? "it computed wrong: sgemm 1x1x1" : "it crashed (Segmentation fault)"),
              std::string::npos)
        << r.output;
    // The failure is remembered too: the next start does not run the failing core again.
    EXPECT_NE(read_all(cache_file()).find("core=\n"), std::string::npos);
  }
}

TEST_F(BlasCore, TheUsersChoiceWinsAndTheChoiceCanBeTurnedOff) {
  const auto user = doctor({"LRB_FAULT_BLAS_FALLBACK=Prescott", "OPENBLAS_CORETYPE=PRESCOTT"});
  ASSERT_EQ(user.code, kExitDone) << user.output;
  EXPECT_EQ(line_of(user.output, "BLAS core"), "BLAS core    Prescott (OPENBLAS_CORETYPE)") << user.output;
  EXPECT_EQ(line_of(user.output, "BLAS choice"), "BLAS choice  user: OPENBLAS_CORETYPE was set before lrbench started");
  const auto off = doctor({"LRB_FAULT_BLAS_FALLBACK=Prescott", "LRB_BLAS_AUTO=0"});
  ASSERT_EQ(off.code, kExitDone) << off.output;
  EXPECT_EQ(line_of(off.output, "BLAS choice"), "BLAS choice  off: LRB_BLAS_AUTO=0, OpenBLAS chooses");
  EXPECT_TRUE(cache_file().empty()) << "nothing checked, nothing cached";
}

TEST_F(BlasCore, ADamagedForeignOrStrangeCacheIsCheckedAgainNeverTrusted) {
  ASSERT_EQ(doctor({"LRB_FAULT_BLAS_FALLBACK=Prescott"}).code, kExitDone);
  const fs::path file = cache_file();
  const std::string good = read_all(file);
  const std::string better = better_than_prescott();
  // Each damage, then a start with a check that computes wrong: a trusted damaged cache
  // would still say "auto"; a checked one says the core failed.
  const std::vector<std::pair<std::string, std::string>> damages = {
      {"empty", ""},
      {"truncated", good.substr(0, good.size() / 2)},
      {"another library", [&] {
         std::string s = good;
         s.replace(s.find("size="), 5, "size=1");
         return s;
       }()},
      {"a core that is not a name", [&] {
         std::string s = good;
         s.replace(s.find("core=" + better), 5 + better.size(), "core=SKYLAKEX;rm -rf /");
         return s;
       }()},
      {"another format", "format=lrbench-blas-core 2\n" + good.substr(good.find('\n') + 1)},
      {"binary", std::string("\0\xff\x01" "format=", 10)},
  };
  for (const auto& [what, text] : damages) {
    SCOPED_TRACE(what);
    test::write_text(file, text);
    const auto r = doctor({"LRB_FAULT_BLAS_FALLBACK=Prescott", "LRB_FAULT_BLAS_CHECK=wrong"});
    ASSERT_EQ(r.code, kExitDone) << r.output;
    EXPECT_NE(line_of(r.output, "BLAS choice").find("failed its self-test"), std::string::npos) << r.output;
    test::write_text(file, good);
  }
  // A FIFO or a folder where the cache file should be: never waited on, checked afresh.
  for (const std::string kind : {"fifo", "folder"}) {
    SCOPED_TRACE(kind);
    fs::remove(file);
    ASSERT_EQ(kind == "fifo" ? ::mkfifo(file.c_str(), 0644) : ::mkdir(file.c_str(), 0755), 0);
    const auto r = doctor({"LRB_FAULT_BLAS_FALLBACK=Prescott"});
    ASSERT_EQ(r.code, kExitDone) << r.output;
    EXPECT_NE(line_of(r.output, "BLAS choice").find("auto: OpenBLAS fell back to Prescott"), std::string::npos) << r.output;
    fs::remove_all(file);
  }
}

TEST_F(BlasCore, RanksStartingTogetherAgreeAndLeaveOneCacheFile) {
  std::vector<std::future<test::Result>> starts;
  for (int i = 0; i < 6; ++i)
    starts.push_back(std::async(std::launch::async, [&] { return doctor({"LRB_FAULT_BLAS_FALLBACK=Prescott"}); }));
  std::string core;
  int checked = 0;
  for (auto& s : starts) {
    const auto r = s.get();
    ASSERT_EQ(r.code, kExitDone) << r.output;
    if (core.empty()) core = line_of(r.output, "BLAS core");
    EXPECT_EQ(line_of(r.output, "BLAS core"), core);
    if (line_of(r.output, "BLAS choice").find("cached") == std::string::npos) ++checked;
  }
  EXPECT_EQ(checked, 1) << "the others waited for the first one's verdict";
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(cache_home_.path() / "lrbench"))
    if (e.path().filename().string().rfind("blas-core-", 0) == 0) files.push_back(e.path().filename().string());
  EXPECT_EQ(files.size(), 2u) << "the verdict and its lock, no temporary left";
}

}  // namespace
}  // namespace lrb
