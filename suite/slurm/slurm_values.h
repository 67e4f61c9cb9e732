#pragma once
// The values that go into an sbatch script, parsed and checked. Each function accepts
// only what it can prove harmless in an #SBATCH line and in a single-quoted shell word,
// and throws UserError naming the flag and what to give instead.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace lrb {

// A whole number in [min, max] ("--nodes", "2", 1, 1024); digits only.
int parse_slurm_count(std::string_view flag, std::string_view text, int min, int max);

// A Slurm time limit: "minutes", "minutes:seconds", "hours:minutes:seconds", "days-hours",
// "days-hours:minutes", "days-hours:minutes:seconds". Returns seconds (> 0, at most a year).
std::int64_t parse_time_limit(std::string_view text);
// Seconds as "D-HH:MM:SS", a form every Slurm version reads.
std::string format_time_limit(std::int64_t seconds);

// --array: "N" (tasks 0..N-1) or "A-B", either with "%M" (at most M at a time).
struct ArraySpec {
  int first = 0, last = 0;
  int max_running = 0;  // 0: no limit
  int count() const { return last - first + 1; }
  std::string text() const;  // "0-2%2"
};
ArraySpec parse_array(std::string_view text);
inline constexpr int kMaxArrayIndex = 4000000;  // Slurm's own ceiling (MaxArraySize <= 4000001)

// --signal-lead: 1..65535 seconds, and shorter than the time limit when there is one (a
// warning due at or before the start would come at once).
void check_signal_lead(int lead_seconds, const std::optional<std::int64_t>& time_limit_seconds);

// Partition, account and job names: 1..64 of [A-Za-z0-9._-].
void check_slurm_name(std::string_view flag, std::string_view value);
bool is_slurm_name(std::string_view value);

// A path that goes into the script: absolute, made only of [A-Za-z0-9._+/-], so it can be
// single-quoted in bash and written in an #SBATCH line (no '%', which Slurm expands).
void check_script_path(std::string_view what, const std::filesystem::path& path);
bool is_script_safe_path(std::string_view path);

}  // namespace lrb
