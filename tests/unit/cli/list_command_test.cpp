// ListCommand: `lrbench list --markdown` is docs/options.md, the manual's options reference:
// a model or task option added, renamed or given another default without regenerating the
// file fails here.
#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace lrb
