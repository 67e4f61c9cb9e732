#include "suite/slurm/slurm_values.h"

#include <charconv>
#include <cstdio>
#include <vector>

#include "suite/core/errors.h"

namespace lrb {

namespace {

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Digits only, at most 9 of them (so the value fits an int).
bool to_int(std::string_view s, std::int64_t& out) {
  if (!all_digits(s) || s.size() > 9) return false;
  out = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

}  // namespace

int parse_slurm_count(std::string_view flag, std::string_view text, int min, int max) {
  std::int64_t v = 0;
  if (!to_int(text, v) || v < min || v > max)
    throw UserError(std::string(flag) + " " + in_quotes(text) + ": give a whole number from " + std::to_string(min) +
                    " to " + std::to_string(max));
  return static_cast<int>(v);
}

std::int64_t parse_time_limit(std::string_view text) {
  const std::string hint =
      "--time " + in_quotes(text) +
      ": give a time limit as minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes "
      "or days-hours:minutes:seconds (e.g. 90, 2:00:00, 1-12:00:00)";
  std::int64_t days = 0;
  std::string_view rest = text;
  const auto dash = text.find('-');
  if (dash != std::string_view::npos) {
    if (!to_int(text.substr(0, dash), days)) throw UserError(hint);
    rest = text.substr(dash + 1);
  }
  const auto parts = split(rest, ':');
  std::vector<std::int64_t> v;
  for (auto p : parts) {
    std::int64_t x = 0;
    if (!to_int(p, x)) throw UserError(hint);
    v.push_back(x);
  }
  std::int64_t seconds = 0;
  const auto below = [&](std::int64_t x, std::int64_t limit) {
    if (x >= limit) throw UserError(hint + "; a field after the first is out of range");
  };
  if (dash != std::string_view::npos) {  // days-hours[:minutes[:seconds]]
    if (v.size() > 3) throw UserError(hint);
    below(v[0], 24);
    seconds = days * 86400 + v[0] * 3600;
    if (v.size() > 1) {
      below(v[1], 60);
      seconds += v[1] * 60;
    }
    if (v.size() > 2) {
      below(v[2], 60);
      seconds += v[2];
    }
  } else if (v.size() == 1) {  // minutes
    seconds = v[0] * 60;
  } else if (v.size() == 2) {  // minutes:seconds
    below(v[1], 60);
    seconds = v[0] * 60 + v[1];
  } else if (v.size() == 3) {  // hours:minutes:seconds
    below(v[1], 60);
    below(v[2], 60);
    seconds = v[0] * 3600 + v[1] * 60 + v[2];
  } else {
    throw UserError(hint);
  }
  if (seconds <= 0) throw UserError("--time " + in_quotes(text) + ": the time limit must be longer than zero");
  if (seconds > 366 * 86400)
    throw UserError("--time " + in_quotes(text) + ": more than a year; give a shorter limit (the job requeues itself when it runs out)");
  return seconds;
}

std::string format_time_limit(std::int64_t s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(s / 86400),
                static_cast<long long>(s % 86400 / 3600), static_cast<long long>(s % 3600 / 60),
                static_cast<long long>(s % 60));
  return buf;
}

std::string ArraySpec::text() const {
  std::string t = std::to_string(first) + "-" + std::to_string(last);
  if (max_running > 0) t += "%" + std::to_string(max_running);
  return t;
}

ArraySpec parse_array(std::string_view text) {
  const std::string hint = "--array " + in_quotes(text) +
                           ": give a number of tasks N (tasks 0..N-1) or a range A-B, optionally with %M to run at most M "
                           "at a time (e.g. 4, 0-2%2)";
  ArraySpec a;
  std::string_view range = text;
  const auto pct = text.find('%');
  if (pct != std::string_view::npos) {
    std::int64_t m = 0;
    if (!to_int(text.substr(pct + 1), m) || m < 1) throw UserError(hint);
    a.max_running = static_cast<int>(m);
    range = text.substr(0, pct);
  }
  const auto dash = range.find('-');
  std::int64_t x = 0, y = 0;
  if (dash == std::string_view::npos) {
    if (!to_int(range, x) || x < 1) throw UserError(hint);
    if (x - 1 > kMaxArrayIndex) throw UserError(hint + "; Slurm allows at most " + std::to_string(kMaxArrayIndex + 1) + " tasks");
    a.first = 0;
    a.last = static_cast<int>(x - 1);
  } else {
    if (!to_int(range.substr(0, dash), x) || !to_int(range.substr(dash + 1), y) || x > y) throw UserError(hint);
    if (y > kMaxArrayIndex) throw UserError(hint + "; Slurm's largest task index is " + std::to_string(kMaxArrayIndex));
    a.first = static_cast<int>(x);
    a.last = static_cast<int>(y);
  }
  return a;
}

void check_signal_lead(int lead, const std::optional<std::int64_t>& time_limit) {
  if (lead < 1 || lead > 65535)
    throw UserError("--signal-lead " + std::to_string(lead) + ": give seconds from 1 to 65535");
  if (time_limit && lead >= *time_limit)
    throw UserError("--signal-lead " + std::to_string(lead) + " s is not shorter than --time (" +
                    format_time_limit(*time_limit) +
                    "): the warning would come at once; give a longer --time or a shorter --signal-lead");
}

bool is_slurm_name(std::string_view value) {
  if (value.empty() || value.size() > 64) return false;
  for (char c : value)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
      return false;
  return true;
}

void check_slurm_name(std::string_view flag, std::string_view value) {
  if (!is_slurm_name(value))
    throw UserError(std::string(flag) + " " + in_quotes(value) + ": a name may hold only letters, digits, '.', '_' and '-' (1 to 64 of them)");
}

bool is_script_safe_path(std::string_view path) {
  if (path.empty() || path.front() != '/' || path.size() > 4000) return false;
  for (char c : path)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
          c == '+' || c == '/'))
      return false;
  return true;
}

void check_script_path(std::string_view what, const std::filesystem::path& path) {
  if (!is_script_safe_path(path.string()))
    throw UserError(std::string(what) + " " + in_quotes(path.string()) +
                    " cannot go into an sbatch script: its absolute path may hold only letters, digits and . _ + - /; "
                    "move it (or link it) to such a path");
}

}  // namespace lrb
