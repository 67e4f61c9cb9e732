// ReportHtmlCommand: the HTML report (written by the lrbench program) opens in headless Chromium (Debian's `chromium`, installed by
// scripts/setup.sh): the tables are in the DOM and every plot is an inline SVG the browser
// laid out (the page's own check sets data-plots-rendered on <body>); no <img> anywhere.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "suite/core/exit_codes.h"
#include "suite/config/claim_spec.h"
#include "suite/core/files.h"
#include "suite/store/sweep_manifest.h"
#include "tests/support/report_runs.h"
#include "tests/support/subprocess.h"

extern char** environ;

namespace lrb {
namespace {

constexpr const char* kChromium = "/usr/bin/chromium";

// Runs argv with stdout to `out` and stderr to `err` (the DOM must not mix with Chromium's
// log lines); returns the exit code, or -1 after killing it at the timeout.
int run_to_files(const std::vector<std::string>& args, const std::filesystem::path& out, const std::filesystem::path& err,
                 std::chrono::seconds timeout) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group: a timeout kills its helpers too
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return -2;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);  // helpers Chromium may have left behind in its group
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::size_t count(const std::string& s, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t pos = 0; (pos = s.find(needle, pos)) != std::string::npos; pos += needle.size()) ++n;
  return n;
}

// The page without the text of its scripts (which hold markup they write later).
std::string without_scripts(std::string html) {
  for (std::size_t at = 0; (at = html.find("<script", at)) != std::string::npos;) {
    const std::size_t end = html.find("</script>", at);
    if (end == std::string::npos) break;
    html.erase(at, end - at);
    at += 1;
  }
  return html;
}

// The report fixture (two tasks, failed and stopped runs, a hostile model name) with one
// claim whose statement and source are long, as an HTML page; returns its path.
std::filesystem::path write_fixture_page(const test::TempDir& t) {
  test::write_report_fixture(t / "results");
  // A hostile model name must stay text in the page.
  for (int s = 0; s < 2; ++s) {
    test::RunDraft d;
    d.model = "evil<img src=x onerror=alert(1)>";
    d.seed = s;
    d.metrics = {{"eval_accuracy", 0.4 + 0.01 * s}};
    test::write_run(t / "results", d);
  }
  // A claim with a long statement and source: its verdict must still show on a 1,400-pixel screen.
  SweepManifest manifest;
  manifest.sweep = "fixture";
  for (const auto& e : std::filesystem::directory_iterator(t / "results" / "runs"))
    if (e.path().extension() == ".h5") manifest.runs.push_back(e.path().stem().string());
  ClaimSpec claim;
  claim.name = "linear-beats-transformer";
  claim.statement = "linear attention is more accurate than softmax attention on short ListOps, at every width the paper tried, "
                    "with the same training budget and the same data";
  claim.source = "a paper, Table 2 and Section 4.3: the ablation over attention kernels at matched parameter counts and steps";
  claim.kind = ClaimKind::Better;
  claim.metric = "eval_accuracy";
  claim.a.match = {{"task.name", "listops"}, {"model.name", "linear"}};
  claim.a.label = "linear on listops";
  claim.b.match = {{"task.name", "listops"}, {"model.name", "transformer"}};
  claim.b.label = "transformer on listops";
  manifest.claims.push_back(claim);
  write_sweep_manifest(t / "results", manifest);
  const auto page = t / "report.html";
  auto r = test::run({test::lrbench(), "report", (t / "results").string(), "--baseline", "transformer", "--resamples", "1000",
                      "-o", page.string()},
                     std::chrono::seconds(180));
  EXPECT_EQ(r.code, kExitDone) << r.output;
  return page;
}

// The DOM headless Chromium made of `page` once its scripts ran ("" when it failed: the
// test fails with Chromium's log).
std::string dump_dom(const test::TempDir& t, const std::filesystem::path& page) {
  const int code = run_to_files({kChromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                                 "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,1000",
                                 "--user-data-dir=" + (t / "chromium-profile").string(), "--dump-dom", "file://" + page.string()},
                                t / "dom.html", t / "chromium.log", std::chrono::seconds(120));
  EXPECT_EQ(code, 0) << "chromium failed (" << code << "): " << read_file(t / "chromium.log");
  const std::string dom = code == 0 ? read_file(t / "dom.html") : "";
  EXPECT_FALSE(dom.empty()) << read_file(t / "chromium.log");
  return dom;
}

// What tests/fixtures/html/<driver> found when it drove a copy of `page` in Chromium (null
// when it did not run: the test then fails with why).
nlohmann::json drive(const test::TempDir& t, const std::filesystem::path& page, const std::string& driver) {
  std::string html = read_file(page);
  html.insert(html.rfind("</body>"), "<script>\n" + read_file(std::filesystem::path(LRB_FIXTURES_DIR) / "html" / driver) + "</script>\n");
  write_file_atomic(t / "driven.html", html);
  const std::string dom = dump_dom(t, t / "driven.html");
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex("data-test=\"([^\"]*)\""))) {
    ADD_FAILURE() << "the driver did not run";
    return nullptr;
  }
  std::string text = m[1];
  for (const auto& [entity, c] : std::vector<std::pair<std::string, std::string>>{{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}})
    for (std::size_t at = 0; (at = text.find(entity, at)) != std::string::npos; at += c.size()) text.replace(at, entity.size(), c);
  return nlohmann::json::parse(text);
}

TEST(ReportHtmlCommand, OpensInHeadlessChromiumWithTablesAndEveryPlot) {
  ASSERT_TRUE(std::filesystem::exists(kChromium))
      << kChromium << " is not installed: run scripts/setup.sh (as root) to install Debian's chromium package";
  test::TempDir t;
  const auto page = write_fixture_page(t);
  const std::string html = read_file(page);
  EXPECT_EQ(count(html, "<img"), 0u);
  EXPECT_EQ(count(html, "http://") - count(html, "http://www.w3.org/"), 0u) << "the page must need no network";
  const std::string dom = dump_dom(t, page);
  ASSERT_FALSE(dom.empty());

  for (const char* id : {"summary-listops", "spread-listops", "comparisons-listops", "summary-text", "efficiency-text", "front-text",
                         "scaling-text"})
    EXPECT_NE(dom.find(std::string("<table class=\"lrb\" id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_NE(dom.find("non-finite loss at step 3"), std::string::npos);
  EXPECT_NE(dom.find("evil&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_EQ(count(dom, "<img"), 0u) << "an <img> in the DOM: a missing image, or an escaping hole";
  EXPECT_EQ(count(dom, "<script"), 2u) << "only the page's own data and script";

  // Plots: seed strips (listops, text), metric against memory (text), scaling (text: memory,
  // time), the accuracy–parameters front (text).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("data-plots=\"(\\d+)\""))) << "the page's check did not run";
  const int plots = std::stoi(m[1]);
  EXPECT_EQ(plots, 6);
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("data-plots-rendered=\"(\\d+)\"")));
  EXPECT_EQ(std::stoi(m[1]), plots) << "a plot did not render";
  EXPECT_EQ(count(dom, "<figure class=\"plot\""), static_cast<std::size_t>(plots));
  EXPECT_EQ(count(without_scripts(dom), "<svg"), static_cast<std::size_t>(plots)) << "the page's own script writes SVG text";
  for (const char* kind : {"data-kind=\"seeds\"", "data-kind=\"memory\"", "data-kind=\"scaling\"", "data-kind=\"pareto\""})
    EXPECT_NE(dom.find(kind), std::string::npos) << kind;

  // The claims table: the verdict is laid out inside a 1,400-pixel window.
  EXPECT_NE(dom.find("<table class=\"lrb\" id=\"claims\""), std::string::npos);
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("data-verdicts=\"(\\d+)\"")));
  EXPECT_EQ(std::stoi(m[1]), 1);
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("data-verdicts-visible=\"(\\d+)\"")));
  EXPECT_EQ(std::stoi(m[1]), 1) << "the verdict is off-screen at 1,400 pixels";
  // No cell's text runs out of its cell (over the next column's): long cells wrap.
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("data-cells-overflowing=\"(\\d+)\"")));
  std::smatch first;
  std::regex_search(dom, first, std::regex("data-overflow-first=\"([^\"]*)\""));
  EXPECT_EQ(std::stoi(m[1]), 0) << "the first: " << (first.empty() ? std::string() : first[1].str());
}

// The page as a reader uses it, driven through its own controls by
// tests/fixtures/html/page_driver.js: a column sorts, the filter bar narrows rows and hides
// tables, a cell's row opens to a dot per seed and its values, a claim's row to its paired
// values and how the verdict was reached.
TEST(ReportHtmlCommand, SortingFilteringAndOpeningWorkInTheBrowser) {
  ASSERT_TRUE(std::filesystem::exists(kChromium))
      << kChromium << " is not installed: run scripts/setup.sh (as root) to install Debian's chromium package";
  test::TempDir t;
  const nlohmann::json o = drive(t, write_fixture_page(t), "page_driver.js");
  ASSERT_FALSE(o.is_null());
  ASSERT_FALSE(o.contains("error")) << o.at("error");
  // listops: linear 0.715, transformer 0.62, bigbird 0.55, the hostile name 0.405.
  EXPECT_EQ(o.at("sort_order"), "descending");
  EXPECT_EQ(o.at("sorted"), 1);
  EXPECT_EQ(o.at("rows"), 4);
  EXPECT_EQ(o.at("first"), "linear");
  EXPECT_EQ(o.at("shown_for_first"), 1) << "the model filter, case-insensitive";
  EXPECT_EQ(o.at("task_tables_hidden"), o.at("task_tables"));
  EXPECT_GT(o.at("task_tables").get<int>(), 4);
  EXPECT_EQ(o.at("shown_unfiltered"), 4);
  EXPECT_EQ(o.at("opened"), 1);
  EXPECT_EQ(o.at("cell_n"), 2);
  EXPECT_EQ(o.at("cell_dots"), 2) << "a dot per seed";
  EXPECT_EQ(o.at("cell_seed_rows"), 2);
  EXPECT_EQ(o.at("closed"), 1);
  EXPECT_EQ(o.at("claim_n"), 2);
  EXPECT_EQ(o.at("claim_dots"), 2) << "a dot per paired seed";
  EXPECT_EQ(o.at("claim_seed_rows"), 2);
  const std::string claim = o.at("claim_text");
  EXPECT_NE(claim.find("verdict:"), std::string::npos) << claim;
  EXPECT_NE(claim.find("A − B by seed: 2 pair(s)"), std::string::npos) << claim;
}

// The accuracy–cost front (tests/support/report_runs.h, front_runs): the plot rendered, a
// transparent hot spot over each point gnuplot drew, and a click on the Transformer's point
// opens its four seeds under the figure (tests/fixtures/html/pareto_driver.js).
TEST(ReportHtmlCommand, AFrontsPointOpensItsSeeds) {
  ASSERT_TRUE(std::filesystem::exists(kChromium)) << kChromium << " is not installed: run scripts/setup.sh (as root)";
  test::TempDir t;
  test::write_runs(t / "results", test::front_runs());
  const auto page = t / "front.html";
  auto r = test::run({test::lrbench(), "report", (t / "results").string(), "--resamples", "1000", "-o", page.string()},
                     std::chrono::seconds(180));
  ASSERT_EQ(r.code, kExitDone) << r.output;
  const std::string dom = dump_dom(t, page);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("data-plots=\"(\\d+)\"")));
  const int plots = std::stoi(m[1]);
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("data-plots-rendered=\"(\\d+)\"")));
  EXPECT_EQ(std::stoi(m[1]), plots) << "a plot did not render";
  EXPECT_NE(dom.find("data-kind=\"pareto\""), std::string::npos);
  const nlohmann::json o = drive(t, page, "pareto_driver.js");
  ASSERT_FALSE(o.is_null());
  ASSERT_FALSE(o.contains("error")) << o.at("error");
  EXPECT_EQ(o.at("hotspots"), 6) << "one per cell placed";
  EXPECT_LT(o.at("worst_offset_px").get<double>(), 1.5) << "a hot spot off its point";
  EXPECT_EQ(o.at("found"), 1);
  EXPECT_EQ(o.at("hit_is_hotspot"), 1) << "a pointer at the point would not reach the hot spot";
  EXPECT_EQ(o.at("box"), 1);
  EXPECT_EQ(o.at("box_seed_rows"), 4);
  EXPECT_EQ(o.at("box_dots"), 4);
  EXPECT_NE(o.at("box_text").get<std::string>().find("transformer"), std::string::npos) << o.at("box_text");
}

// `leaderboard --by cost-to-target` on three tasks: its tables and the performance profile's
// plot; without targets, exit 2 naming what is missing.
TEST(ReportHtmlCommand, TheCostToTargetLeaderboardDrawsItsProfile) {
  ASSERT_TRUE(std::filesystem::exists(kChromium)) << kChromium << " is not installed: run scripts/setup.sh (as root)";
  test::TempDir t;
  test::write_runs(t / "three", test::three_task_target_runs());
  const auto page = t / "leaderboard.html";
  auto r = test::run({test::lrbench(), "leaderboard", (t / "three").string(), "--by", "cost-to-target", "--cost", "steps", "-o",
                      page.string()},
                     std::chrono::seconds(180));
  ASSERT_EQ(r.code, kExitDone) << r.output;
  const std::string dom = dump_dom(t, page);
  EXPECT_NE(dom.find("id=\"cost-profile\""), std::string::npos);
  EXPECT_NE(dom.find("data-kind=\"profile\""), std::string::npos);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("data-plots=\"(\\d+)\"")));
  const int plots = std::stoi(m[1]);
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("data-plots-rendered=\"(\\d+)\"")));
  EXPECT_EQ(std::stoi(m[1]), plots) << "a plot did not render";
  test::write_runs(t / "untargeted", test::front_runs());
  auto none = test::run({test::lrbench(), "leaderboard", (t / "untargeted").string(), "--by", "cost-to-target"});
  EXPECT_EQ(none.code, kExitUsage) << none.output;
  EXPECT_NE(none.output.find("has a target"), std::string::npos) << none.output;
}

}  // namespace
}  // namespace lrb
