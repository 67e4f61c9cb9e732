// DIR/sweep.json: one reader for the report, status and the sweep runner; a damaged or
// hand-edited manifest is a UserError that names the file and the field, never a crash.
#include "suite/store/sweep_manifest.h"

#include <gtest/gtest.h>

#include <string>

#include "suite/core/errors.h"
#include "suite/store/results_layout.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

const std::string kKey(64, 'a');

std::string error_of(const test::TempDir& dir, const std::string& text) {
  test::write_text(ResultsLayout(dir.path()).manifest(), text);
  try {
    (void)read_sweep_manifest(dir.path());
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(SweepManifest, WhatIsWrittenIsReadBack) {
  test::TempDir dir;
  EXPECT_FALSE(read_sweep_manifest(dir.path()).has_value());
  const SweepManifest m{"s", "s.toml", {kKey, std::string(64, '0')}, {{"listops / bigbird", "block too large"}}, {}};
  write_sweep_manifest(dir.path(), m);
  const auto back = read_sweep_manifest(dir.path());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->to_json(), m.to_json());
  EXPECT_EQ(back->runs.size(), 2u);
  EXPECT_EQ(back->skipped.at(0).reason, "block too large");
}

TEST(SweepManifest, AnOlderManifestWithoutSkippedClaimsOrFileIsRead) {
  test::TempDir dir;
  EXPECT_EQ(error_of(dir, R"({"sweep": "s", "runs": [")" + kKey + R"("]})"), "");
  EXPECT_EQ(read_sweep_manifest(dir.path())->runs.at(0), kKey);
}

TEST(SweepManifest, EveryKindOfDamageNamesTheFileAndTheField) {
  test::TempDir dir;
  const std::string file = ResultsLayout(dir.path()).manifest().string();
  const std::string key = "\"" + kKey + "\"";
  const std::pair<std::string, std::string> cases[] = {
      {"{", "not valid JSON"},
      {"[1, 2]", "not a JSON object"},
      {R"({"runs": []})", "no \"sweep\""},
      {R"({"sweep": 7, "runs": []})", "\"sweep\" is not a string"},
      {R"({"sweep": "s"})", "no \"runs\""},
      {R"({"sweep": "s", "runs": {}})", "\"runs\" is not an array"},
      {R"({"sweep": "s", "runs": [)" + key + R"(, 3]})", "runs[1] is not a run key"},
      {R"({"sweep": "s", "runs": ["../../etc/passwd"]})", "runs[0] is not a run key"},
      {R"({"sweep": "s", "runs": [")" + std::string(64, 'A') + R"("]})", "runs[0] is not a run key"},
      {R"({"sweep": "s", "runs": [], "skipped": ["x"]})", "skipped[0] is not an object"},
      {R"({"sweep": "s", "runs": [], "skipped": [{"what": "x"}]})", "skipped[0] has no string \"reason\""},
      {R"({"sweep": "s", "runs": [], "claims": [{"name": 1}]})", "claims[0] cannot be read"},
      {R"({"sweep": "s", "runs": [], "file": ["f"]})", "\"file\" is not a string"},
  };
  for (const auto& [text, problem] : cases) {
    const std::string error = error_of(dir, text);
    EXPECT_NE(error.find(file + ": "), std::string::npos) << text << " -> " << error;
    EXPECT_NE(error.find(problem), std::string::npos) << text << " -> " << error;
    EXPECT_NE(error.find("run the sweep again to rewrite it"), std::string::npos) << error;
  }
}

TEST(SweepManifest, ARunKeyIsSixtyFourLowercaseHexDigits) {
  EXPECT_TRUE(is_run_key(kKey));
  EXPECT_TRUE(is_run_key("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(is_run_key(""));
  EXPECT_FALSE(is_run_key(std::string(63, 'a')));
  EXPECT_FALSE(is_run_key(std::string(65, 'a')));
  EXPECT_FALSE(is_run_key(std::string(63, 'a') + "g"));
  EXPECT_FALSE(is_run_key(std::string(63, 'a') + "/"));
}

}  // namespace
}  // namespace lrb
