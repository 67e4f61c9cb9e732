#pragma once
// Typed option schemas: every model, task and config section declares its options (name,
// type, default, range, choices, help). User values are checked against the schema; a
// list given for a scalar option is an axis of the sweep.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/core/errors.h"

namespace toml {
inline namespace v3 {
class table;
class node;
}  // namespace v3
}  // namespace toml

namespace lrb {

using json = nlohmann::json;

// Amount: a number that may be written as text in scientific notation ("2e13"), for counts
// beyond what an integer option holds (a FLOP budget).
enum class OptionType { Int, Float, Bool, String, IntList, FloatList, Bytes, Amount };
const char* type_name(OptionType t);

// Integer options are read and checked exactly, as 64-bit integers (never through a
// double, which rounds above 2^53). One without an explicit `max` takes at most
// kDefaultIntMax; a seed, which may use the whole range, says so with max = kInt64Max.
inline constexpr double kDefaultIntMax = 2147483647.0;     // 2^31 - 1
inline constexpr double kInt64Max = 9223372036854775807.0;  // rounds to 2^63: no bound below int64's
// Sizes in bytes ("16GiB", "1e9"): at most 1 EiB, exactly.
inline constexpr std::int64_t kMaxBytes = std::int64_t{1} << 60;

struct OptionSpec {
  std::string name;
  OptionType type = OptionType::Int;
  json default_value;  // null with derived=false: the option is required
  std::string help;
  std::vector<std::string> choices;  // allowed strings (String options)
  std::optional<double> min, max;    // inclusive bounds for numbers and list elements (integers: see above)
  bool derived = false;              // the default is computed by the schema's resolve hook
  bool axis = true;                  // whether a list of values sweeps this option
};

// Thrown by resolve hooks for rules across options; the caller adds the file:line:column
// of the first of `options` the user wrote (else of the table).
struct OptionError : std::runtime_error {
  OptionError(std::string option_name, const std::string& message)
      : std::runtime_error(message), options{std::move(option_name)} {}
  OptionError(std::vector<std::string> option_names, const std::string& message)
      : std::runtime_error(message), options(std::move(option_names)) {}
  std::vector<std::string> options;
};

struct OptionSchema {
  std::vector<OptionSpec> options;
  // Fills derived defaults and checks rules across options; may read `context` (for a
  // model: the task's description; for a task: its seq_len). Throws OptionError.
  std::function<void(json& resolved, const json& context)> resolve;

  const OptionSpec* find(const std::string& name) const;
  std::vector<std::string> names() const;
  // Every default filled in, then resolve(); used for `lrbench list` and by tests.
  json defaults(const json& context) const;
};

// One option as the user wrote it: the values it takes (one, or several for an axis).
struct OptionAxis {
  std::string name;
  std::vector<json> values;
  SourceLocation where;
};

// Reads the keys of `table` against `schema`, skipping the keys in `reserved`. Unknown keys,
// wrong types, values out of range or not among the choices are UserErrors with the
// key's file:line:column and what to write instead. `section` names the table in messages.
std::vector<OptionAxis> read_options(const toml::table& table, const OptionSchema& schema,
                                     const std::vector<std::string>& reserved, const std::string& file,
                                     const std::string& section);

// Converts one TOML value for `spec` (no axes); throws UserError at the value's location.
json read_value(const toml::node& node, const OptionSpec& spec, const std::string& file, const std::string& section);
// Validates an already-typed JSON value (used for values from the command line).
json check_json_value(const json& value, const OptionSpec& spec, const std::string& where);

// "16GiB", "512MiB", "1.5GB", "1e9", "1000000" -> bytes (rounded to a whole byte), at most
// kMaxBytes. Throws std::invalid_argument with a reason (not a size, or too large).
std::int64_t parse_bytes(const std::string& text);

SourceLocation location_of(const toml::node& node, const std::string& file);

}  // namespace lrb
