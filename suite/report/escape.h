#pragma once
// Escaping for every output language a report writes. Everything that comes from a results
// file (model names, option values, error texts) passes through one of these before it is
// written, so a name such as `<script>` or `50%_{x}` prints as itself and does nothing.
#include <string>
#include <string_view>

namespace lrb {

std::string html_escape(std::string_view s);   // & < > " '
std::string latex_escape(std::string_view s);  // \ { } $ & # ^ _ ~ %, and the Unicode marks the tables use
std::string markdown_escape(std::string_view s);  // | and the characters that start emphasis or links
std::string csv_field(std::string_view s);        // RFC 4180 quoting when needed
// A label gnuplot may show: printable ASCII without quotes, backslash, backquote, '@', '$',
// '#', ';' (gnuplot's string delimiters, command substitution, macros, comments, command
// separator); anything else becomes '?'. Safe inside single quotes in a script and inside
// double quotes in a data file. Scripts turn enhanced text off, so '_', '^', '{' print as is.
std::string gnuplot_label(std::string_view s);

}  // namespace lrb
