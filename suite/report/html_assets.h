#pragma once
// The HTML report's style and scripts: suite/report/html/page.css, page.js and check.js,
// compiled in by suite/CMakeLists.txt (an installed lrbench needs no source tree). Edit
// those files; a test parses the scripts (ReportHtmlAssets).
namespace lrb {
extern const char* const kHtmlPageStyle;    // html/page.css
extern const char* const kHtmlPageScript;   // html/page.js: sorting, filtering, rows that open
extern const char* const kHtmlCheckScript;  // html/check.js: what a headless test reads off the page
}  // namespace lrb
