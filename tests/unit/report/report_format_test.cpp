#include <gtest/gtest.h>

#include <limits>

#include <string>
#include <vector>

#include "suite/core/errors.h"
#include "suite/report/sinks.h"
#include "suite/report/text_format.h"

namespace lrb {
namespace {

// Each sink's file registers its format (LRB_REGISTER_REPORT_FORMAT): all of them reach the
// binary (lrb_report is linked as objects), listed in their fixed order.
TEST(ReportFormats, EverySinkRegistersItsFormatInListingOrder) {
  EXPECT_EQ(report_formats(), (std::vector<std::string>{"term", "md", "csv", "tex", "json", "html"}));
  for (const auto& f : report_format_entries()) {
    EXPECT_FALSE(f.summary.empty()) << f.name;
    ASSERT_TRUE(f.make) << f.name;
    EXPECT_NE(f.make(false), nullptr) << f.name;
    EXPECT_NE(make_report_sink(f.name), nullptr) << f.name;
  }
}

TEST(ReportFormats, AnOutputFilesExtensionPicksTheFormat) {
  EXPECT_EQ(report_format_for_file("out/report.md"), "md");
  EXPECT_EQ(report_format_for_file("report.csv"), "csv");
  EXPECT_EQ(report_format_for_file("report.tex"), "tex");
  EXPECT_EQ(report_format_for_file("report.json"), "json");
  EXPECT_EQ(report_format_for_file("report.html"), "html");
  EXPECT_EQ(report_format_for_file("report.htm"), "html");
  EXPECT_EQ(report_format_for_file("report.txt"), "term");  // plain text, as the terminal shows it
  EXPECT_EQ(report_format_for_file("report"), "");
  EXPECT_EQ(report_format_for_file("report.MD"), "");  // the extension as written: -o report.MD needs --format
}

TEST(ReportFormats, AnUnknownFormatIsAUserErrorWithASuggestion) {
  try {
    make_report_sink("htm");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown report format 'htm'; did you mean 'html'?"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(make_report_sink(""), UserError);
}

// A mean or spread that overflowed was printed "inf [-nan, -nan]" or "± inf": now it says so.
TEST(ReportFormats, DegenerateValuesSayUndefined) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(format_value(inf), "undefined (overflow or no value)");
  EXPECT_EQ(format_value(nan), "undefined (overflow or no value)");
  EXPECT_EQ(format_signed(inf), "undefined (overflow or no value)");
  EXPECT_EQ(format_interval({nan, nan}), "[undefined (overflow or no value)]");
  EXPECT_EQ(format_interval({-inf, 1.0}), "[undefined (overflow or no value)]");
  EXPECT_EQ(format_bytes(inf), "undefined (overflow or no value)");
  EXPECT_EQ(format_seconds(nan), "undefined (overflow or no value)");
  EXPECT_EQ(format_p(nan), "undefined (overflow or no value)");
  EXPECT_EQ(format_value(0.5), "0.5000");
  EXPECT_EQ(format_interval({0.25, 0.5}), "[0.2500, 0.5000]");
}

}  // namespace
}  // namespace lrb
