// ReportHtmlAssets: the HTML report's scripts and style are files (suite/report/html/),
// compiled in as they are, and the scripts parse (Node.js's --check, installed by
// scripts/setup.sh). The page's behaviour in a browser: report_html_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "suite/core/files.h"
#include "suite/report/html_assets.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

const std::string kAssets = std::string(LRB_SOURCE_DIR) + "/suite/report/html/";

TEST(ReportHtmlAssets, TheCompiledInCopiesAreTheFiles) {
  EXPECT_TRUE(read_file(kAssets + "page.css") == kHtmlPageStyle);
  EXPECT_TRUE(read_file(kAssets + "page.js") == kHtmlPageScript);
  EXPECT_TRUE(read_file(kAssets + "check.js") == kHtmlCheckScript);
}

TEST(ReportHtmlAssets, TheScriptsParse) {
  // scripts/setup.sh installs Node.js on Debian 12; the Debian 13 root of
  // scripts/test_debian13.sh has none (the scripts are the same files: parsed once is enough).
  if (!std::filesystem::exists("/usr/bin/node")) GTEST_SKIP() << "Node.js is not installed here: scripts/setup.sh installs it";
  for (const char* script : {"page.js", "check.js"}) {
    const auto r = test::run({"/usr/bin/node", "--check", kAssets + script});
    EXPECT_EQ(r.code, 0) << script << ": " << r.output;
  }
  // And a script that does not parse is told apart.
  test::TempDir t;
  test::write_text(t / "broken.js", "(function(){ var x = ; })();\n");
  EXPECT_NE(test::run({"/usr/bin/node", "--check", (t / "broken.js").string()}).code, 0);
}

}  // namespace
}  // namespace lrb
