#include "suite/contracts/options.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <toml++/toml.h>

#include "suite/core/text.h"

namespace lrb {

const char* type_name(OptionType t) {
  switch (t) {
    case OptionType::Int: return "an integer";
    case OptionType::Float: return "a number";
    case OptionType::Bool: return "true or false";
    case OptionType::String: return "a string";
    case OptionType::IntList: return "a list of integers";
    case OptionType::FloatList: return "a list of numbers";
    case OptionType::Bytes: return "a size such as \"16GiB\" or a byte count";
    case OptionType::Amount: return "a number such as 2e13 (or \"2e13\")";
  }
  return "?";
}

const OptionSpec* OptionSchema::find(const std::string& name) const {
  for (const auto& o : options)
    if (o.name == name) return &o;
  return nullptr;
}

std::vector<std::string> OptionSchema::names() const {
  std::vector<std::string> out;
  for (const auto& o : options) out.push_back(o.name);
  return out;
}

json OptionSchema::defaults(const json& context) const {
  json out = json::object();
  for (const auto& o : options) out[o.name] = o.default_value;
  if (resolve) resolve(out, context);
  return out;
}

SourceLocation location_of(const toml::node& node, const std::string& file) {
  const auto& r = node.source();
  return SourceLocation{file, static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)};
}

std::int64_t parse_bytes(const std::string& text) {
  static const std::pair<const char*, std::int64_t> units[] = {
      {"KiB", std::int64_t{1} << 10}, {"MiB", std::int64_t{1} << 20}, {"GiB", std::int64_t{1} << 30},
      {"TiB", std::int64_t{1} << 40}, {"PiB", std::int64_t{1} << 50}, {"EiB", std::int64_t{1} << 60},
      {"KB", 1000},                   {"MB", 1000000},                {"GB", 1000000000},
      {"TB", 1000000000000},          {"PB", 1000000000000000},       {"B", 1}};
  std::string number = text;
  std::int64_t scale = 1;
  for (const auto& [suffix, factor] : units) {
    const std::string s = suffix;
    if (number.size() > s.size() && number.compare(number.size() - s.size(), s.size(), s) == 0) {
      number = number.substr(0, number.size() - s.size());
      scale = factor;
      break;
    }
  }
  while (!number.empty() && number.back() == ' ') number.pop_back();
  // Digits first: a whole number of bytes is taken exactly, with overflow checked.
  if (!number.empty() && number.find_first_not_of("0123456789") == std::string::npos) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (ec != std::errc() || end != number.data() + number.size() || v > kMaxBytes / scale)
      throw std::invalid_argument("more than 1EiB");
    return v * scale;
  }
  // A fraction or an exponent ("1.5GiB", "1e9"): long double holds every byte count up to
  // 1 EiB exactly, so the bound is checked before anything is converted.
  std::size_t used = 0;
  long double v = 0;
  try {
    v = std::stold(number, &used);
  } catch (const std::out_of_range&) {
    throw std::invalid_argument("more than 1EiB");
  } catch (...) {
    throw std::invalid_argument("not a size");
  }
  if (used != number.size() || std::isnan(v) || v < 0 || number.find_first_of("xXpP") != std::string::npos)
    throw std::invalid_argument("not a size");
  const long double bytes = std::nearbyint(v * static_cast<long double>(scale));
  if (!(bytes <= static_cast<long double>(kMaxBytes))) throw std::invalid_argument("more than 1EiB");
  // "0.5B" rounded to 0 would read as "no budget": a positive size must keep a byte.
  if (v > 0 && bytes < 1) throw std::invalid_argument("less than 1 byte");
  return static_cast<std::int64_t>(bytes);
}

namespace {

UserError fail(const SourceLocation& at, const std::string& section, const OptionSpec& spec,
               const std::string& what) {
  std::string msg = "in " + section + ", '" + spec.name + "' " + what;
  if (!spec.help.empty()) msg += " (" + spec.name + ": " + spec.help + ")";
  return UserError(at, msg);
}

using BadValue = std::function<UserError(const std::string&)>;

json check_number(double v, const OptionSpec& spec, const BadValue& bad) {
  if (spec.min && v < *spec.min) throw bad("must be at least " + json(*spec.min).dump() + ", got " + json(v).dump());
  if (spec.max && v > *spec.max) throw bad("must be at most " + json(*spec.max).dump() + ", got " + json(v).dump());
  return json(v);
}

// The inclusive range of an integer option, as integers: a bound at or beyond int64's range
// is int64's own; no max is kDefaultIntMax.
std::int64_t int_low(const OptionSpec& spec) {
  if (!spec.min || *spec.min <= -kInt64Max) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(std::ceil(*spec.min));
}
std::int64_t int_high(const OptionSpec& spec) {
  const double max = spec.max.value_or(kDefaultIntMax);
  if (max >= kInt64Max) return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(std::floor(max));
}

json check_int(std::int64_t v, std::int64_t low, std::int64_t high, const BadValue& bad) {
  if (v < low) throw bad("must be at least " + std::to_string(low) + ", got " + std::to_string(v));
  if (v > high) throw bad("must be at most " + std::to_string(high) + ", got " + std::to_string(v));
  return json(v);
}
json check_int(std::int64_t v, const OptionSpec& spec, const BadValue& bad) {
  return check_int(v, int_low(spec), int_high(spec), bad);
}
// Sizes default to kMaxBytes, not kDefaultIntMax, as their bound.
json check_bytes(std::int64_t v, const OptionSpec& spec, const BadValue& bad) {
  return check_int(v, int_low(spec), spec.max ? int_high(spec) : kMaxBytes, bad);
}

json convert_scalar(const toml::node& node, const OptionSpec& spec, OptionType type,
                    const BadValue& bad) {
  switch (type) {
    case OptionType::Int:
    case OptionType::IntList: {
      if (auto v = node.as_integer()) return check_int(v->get(), spec, bad);
      if (auto f = node.as_floating_point()) {
        // 3.0 means 3; only where a double holds every integer exactly (below 2^53).
        const double d = f->get();
        if (std::floor(d) == d && std::fabs(d) < 9007199254740992.0) return check_int(static_cast<std::int64_t>(d), spec, bad);
      }
      throw bad("must be an integer");
    }
    case OptionType::Float:
    case OptionType::FloatList: {
      if (auto v = node.as_integer()) return check_number(static_cast<double>(v->get()), spec, bad);
      if (auto f = node.as_floating_point()) {
        if (!std::isfinite(f->get())) throw bad("must be a finite number");
        return check_number(f->get(), spec, bad);
      }
      throw bad("must be a number");
    }
    case OptionType::Amount: {
      if (auto v = node.as_integer()) return check_number(static_cast<double>(v->get()), spec, bad);
      if (auto f = node.as_floating_point()) {
        if (!std::isfinite(f->get())) throw bad("must be a finite number");
        return check_number(f->get(), spec, bad);
      }
      if (auto s = node.as_string()) {
        const std::string& text = s->get();
        char* end = nullptr;
        const double v = text.empty() ? std::nan("") : std::strtod(text.c_str(), &end);
        if (!std::isfinite(v) || end != text.c_str() + text.size() || text.find_first_of("xXpP") != std::string::npos)
          throw bad("is not a number: \"" + text + "\" (write e.g. 2e13 or \"2e13\")");
        return check_number(v, spec, bad);
      }
      throw bad("must be a number such as 2e13 (or \"2e13\")");
    }
    case OptionType::Bool:
      if (auto v = node.as_boolean()) return json(v->get());
      throw bad("must be true or false");
    case OptionType::String: {
      auto v = node.as_string();
      if (!v) throw bad("must be a string (in quotes)");
      const std::string s = v->get();
      if (!spec.choices.empty() &&
          std::find(spec.choices.begin(), spec.choices.end(), s) == spec.choices.end())
        throw bad("has no value \"" + s + "\"" + suggestion(s, spec.choices));
      return json(s);
    }
    case OptionType::Bytes: {
      if (auto v = node.as_integer()) {
        if (v->get() < 0) throw bad("must not be negative");
        if (v->get() > kMaxBytes) throw bad("must be at most 1EiB (" + std::to_string(kMaxBytes) + " bytes)");
        return check_bytes(v->get(), spec, bad);
      }
      if (auto s = node.as_string()) {
        std::int64_t bytes = 0;
        try {
          bytes = parse_bytes(s->get());
        } catch (const std::invalid_argument& e) {
          if (std::string(e.what()) == "more than 1EiB")
            throw bad("is too large: \"" + s->get() + "\" (at most 1EiB)");
          if (std::string(e.what()) == "less than 1 byte")
            throw bad("is less than one byte: \"" + s->get() + "\" (write 0 for none, or at least \"1B\")");
          throw bad("is not a size: \"" + s->get() + "\" (write e.g. \"16GiB\", \"512MiB\" or a byte count)");
        }
        return check_bytes(bytes, spec, bad);
      }
      throw bad("must be a size such as \"16GiB\" or a byte count");
    }
  }
  throw bad("has an unsupported type");
}

bool is_list_type(OptionType t) { return t == OptionType::IntList || t == OptionType::FloatList; }

json convert_list(const toml::array& arr, const OptionSpec& spec, const std::string& file, const std::string& section) {
  json out = json::array();
  for (const auto& el : arr) {
    const SourceLocation at = location_of(el, file);
    auto bad = [&](const std::string& what) { return fail(at, section, spec, "element " + what); };
    out.push_back(convert_scalar(el, spec, spec.type, bad));
  }
  return out;
}

}  // namespace

json read_value(const toml::node& node, const OptionSpec& spec, const std::string& file, const std::string& section) {
  const SourceLocation at = location_of(node, file);
  auto bad = [&](const std::string& what) { return fail(at, section, spec, what); };
  if (is_list_type(spec.type)) {
    auto arr = node.as_array();
    if (!arr) throw bad(std::string("must be ") + type_name(spec.type));
    return convert_list(*arr, spec, file, section);
  }
  return convert_scalar(node, spec, spec.type, bad);
}

std::vector<OptionAxis> read_options(const toml::table& table, const OptionSchema& schema,
                                     const std::vector<std::string>& reserved, const std::string& file,
                                     const std::string& section) {
  std::vector<OptionAxis> axes;
  std::vector<std::string> known = schema.names();
  known.insert(known.end(), reserved.begin(), reserved.end());
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    if (std::find(reserved.begin(), reserved.end(), name) != reserved.end()) continue;
    const OptionSpec* spec = schema.find(name);
    const SourceLocation key_at{file, static_cast<int>(key.source().begin.line),
                                static_cast<int>(key.source().begin.column)};
    if (!spec) throw UserError(key_at, "unknown key '" + name + "' in " + section + suggestion(name, known));
    OptionAxis axis{name, {}, key_at};
    auto arr = node.as_array();
    const bool list_of_lists = arr && !arr->empty() && (*arr)[0].is_array();
    if (arr && (!is_list_type(spec->type) || list_of_lists)) {
      // A list where a single value is expected: an axis of the sweep.
      if (!spec->axis)
        throw UserError(location_of(node, file), "in " + section + ", '" + name + "' takes a single value, not a list");
      if (arr->empty())
        throw UserError(location_of(node, file), "in " + section + ", '" + name + "' is an empty list; give at least one value");
      for (const auto& el : *arr) axis.values.push_back(read_value(el, *spec, file, section));
      for (std::size_t i = 0; i < axis.values.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
          if (axis.values[i] == axis.values[j])
            throw UserError(location_of((*arr)[i], file),
                            "in " + section + ", '" + name + "' lists " + axis.values[i].dump() + " twice");
    } else {
      axis.values.push_back(read_value(node, *spec, file, section));
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

json check_json_value(const json& value, const OptionSpec& spec, const std::string& where) {
  // Round-trip through TOML so command-line values obey exactly the file rules.
  toml::table t;
  if (value.is_number_integer()) t.insert("v", value.get<std::int64_t>());
  else if (value.is_number()) t.insert("v", value.get<double>());
  else if (value.is_boolean()) t.insert("v", value.get<bool>());
  else if (value.is_string()) t.insert("v", value.get<std::string>());
  else if (value.is_array()) {
    toml::array a;
    for (const auto& e : value) {
      if (e.is_number_integer()) a.push_back(e.get<std::int64_t>());
      else a.push_back(e.get<double>());
    }
    t.insert("v", std::move(a));
  } else {
    throw UserError(where + ": '" + spec.name + "' must be " + type_name(spec.type));
  }
  return read_value(*t.get("v"), spec, where, "the command line");
}

}  // namespace lrb
