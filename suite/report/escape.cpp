#include "suite/report/escape.h"

#include <cstring>

namespace lrb {

std::string html_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string latex_escape(std::string_view s) {
  // Unicode the tables themselves use, mapped to LaTeX so the fragment needs no extra packages.
  static const std::pair<const char*, const char*> unicode[] = {
      {"±", "$\\pm$"}, {"—", "---"}, {"–", "--"}, {"†", "\\textsuperscript{\\dag}"},
      {"‡", "\\textsuperscript{\\ddag}"}, {"≈", "$\\approx$"}, {"α", "$\\alpha$"}, {"Δ", "$\\Delta$"},
      {"≤", "$\\le$"}, {"≥", "$\\ge$"}, {"×", "$\\times$"}, {"·", "$\\cdot$"},
      {"µ", "$\\mu$"}, {"½", "$\\frac{1}{2}$"}, {"²", "$^2$"}, {"−", "$-$"}, {"ρ", "$\\rho$"}, {"τ", "$\\tau$"}};
  std::string o;
  for (std::size_t i = 0; i < s.size();) {
    bool done = false;
    for (const auto& [u, l] : unicode) {
      const std::size_t n = std::strlen(u);
      if (s.substr(i, n) == u) {
        o += l;
        i += n;
        done = true;
        break;
      }
    }
    if (done) continue;
    const char c = s[i++];
    switch (c) {
      case '\\': o += "\\textbackslash{}"; break;
      case '{': o += "\\{"; break;
      case '}': o += "\\}"; break;
      case '$': o += "\\$"; break;
      case '&': o += "\\&"; break;
      case '#': o += "\\#"; break;
      case '%': o += "\\%"; break;
      case '_': o += "\\_"; break;
      case '^': o += "\\textasciicircum{}"; break;
      case '~': o += "\\textasciitilde{}"; break;
      case '<': o += "\\textless{}"; break;
      case '>': o += "\\textgreater{}"; break;
      case '\n': o += ' '; break;
      default: o += c;
    }
  }
  return o;
}

std::string markdown_escape(std::string_view s) {
  std::string o;
  for (char c : s) {
    if (c == '\n') {
      o += ' ';
      continue;
    }
    // Entities for < and >: every renderer reads them as text, also those that pass HTML through.
    if (c == '<') {
      o += "&lt;";
      continue;
    }
    if (c == '>') {
      o += "&gt;";
      continue;
    }
    if (c != '\0' && std::strchr("\\|*_`[]#", c) != nullptr) o += '\\';
    o += c;
  }
  return o;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += "\"\"";
    else o += c;
  }
  return o + "\"";
}

std::string gnuplot_label(std::string_view s) {
  std::string o;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u & 0xC0) == 0x80) continue;  // UTF-8 continuation byte: its lead byte already became '?'
    const bool ok = (u >= 0x20 && u < 0x7F) && std::strchr("'\"\\`@$#;", c) == nullptr;
    o += ok ? c : '?';
  }
  return o;
}

}  // namespace lrb
