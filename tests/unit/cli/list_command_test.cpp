// ListCommand: `lrbench list --markdown` is docs/options.md, the manual's options reference:
// a model or task option added, renamed or given another default without regenerating the
// file fails here.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "suite/config/sweep_spec.h"
#include "suite/config/train_settings.h"
#include "suite/core/exit_codes.h"
#include "suite/core/files.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

TEST(ListCommand, TheOptionsReferenceIsWhatTheProgramRegisters) {
  const auto r = test::run({test::lrbench(), "list", "--markdown"});
  ASSERT_EQ(r.code, kExitDone) << r.output;
  const std::string committed = read_file(std::string(LRB_SOURCE_DIR) + "/docs/options.md");
  EXPECT_TRUE(r.output == committed)
      << "docs/options.md differs from `lrbench list --markdown`: regenerate it with "
         "`build/lrbench list --markdown > docs/options.md` and commit it";
  // Every model and task has its section.
  for (const char* name : {"### maelre", "### transformer", "### torchscript", "### listops", "### fashion-mnist"})
    EXPECT_NE(committed.find(name), std::string::npos) << name;
  EXPECT_EQ(test::run({test::lrbench(), "list", "models", "--markdown"}).code, kExitUsage);
}

// The sweep file's manual (docs/sweep-file.md) shows each key of [sweep], [train] and
// [measure] in its annotated example: a key added to a schema without a line there fails.
TEST(ListCommand, TheSweepFilesExampleShowsEveryKeyOfItsTables) {
  const std::string manual = read_file(std::string(LRB_SOURCE_DIR) + "/docs/sweep-file.md");
  for (const OptionSchema* schema : {&sweep_schema(), &train_schema(), &measure_schema()})
    for (const std::string& key : schema->names()) {
      const std::regex line("(^|[^a-z_])" + key + " *=");
      EXPECT_TRUE(std::regex_search(manual, line)) << "docs/sweep-file.md's example has no `" << key << " = ...`";
    }
}

}  // namespace
}  // namespace lrb
