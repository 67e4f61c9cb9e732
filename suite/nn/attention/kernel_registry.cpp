#include "suite/nn/attention/kernel_registry.h"

#include <ATen/ATen.h>

#include <utility>

#include "suite/core/errors.h"
#include "suite/core/ordered_registry.h"

namespace lrb {
namespace kernel_spec {

OptionSpec int_opt(std::string name, std::int64_t def, std::string help, std::optional<double> min) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::Int;
  s.default_value = def;
  s.help = std::move(help);
  s.min = min;
  return s;
}
OptionSpec float_opt(std::string name, double def, std::string help, std::optional<double> min) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::Float;
  s.default_value = def;
  s.help = std::move(help);
  s.min = min;
  return s;
}
OptionSpec bool_opt(std::string name, bool def, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::Bool;
  s.default_value = def;
  s.help = std::move(help);
  return s;
}
OptionSpec string_opt(std::string name, std::string def, std::vector<std::string> choices, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::String;
  s.default_value = std::move(def);
  s.choices = std::move(choices);
  s.help = std::move(help);
  return s;
}
OptionSpec int_list_opt(std::string name, std::vector<std::int64_t> def, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = OptionType::IntList;
  s.default_value = def;
  s.help = std::move(help);
  s.min = 0;
  s.axis = false;
  return s;
}

OptionSpec scale_opt() { return float_opt("scale", 0.0, "logit scale; 0 means 1/sqrt(d)"); }

std::vector<std::int64_t> int_list(const json& j) { return j.get<std::vector<std::int64_t>>(); }

void reject(const AttentionTensors& in, const std::string& kernel, bool mask, bool global, bool sizes) {
  if (!mask && in.mask.defined()) throw UserError(kernel + " takes no padding mask");
  if (!global && in.global.defined()) throw UserError(kernel + " takes no global tokens (only sliding_window does)");
  if (!sizes && in.sizes.defined()) throw UserError(kernel + " takes no token sizes (only proportional does)");
}

}  // namespace kernel_spec

namespace {

// Filled by the kernels' static registrations (before main), read after.
OrderedRegistry<AttentionKernel>& registry() {
  static OrderedRegistry<AttentionKernel> kernels("attention kernels");
  return kernels;
}

json parse_text_value(const std::string& text, const OptionSpec& spec) {
  auto number = [&](const std::string& t, bool integer) -> json {
    std::size_t used = 0;
    try {
      if (integer) {
        const long long v = std::stoll(t, &used);
        if (used == t.size()) return v;
      } else {
        const double v = std::stod(t, &used);
        if (used == t.size()) return v;
      }
    } catch (...) {
    }
    throw UserError("--opt " + spec.name + "=" + text + ": '" + spec.name + "' must be " + type_name(spec.type) +
                    (spec.help.empty() ? "" : " (" + spec.help + ")"));
  };
  switch (spec.type) {
    case OptionType::Int: return number(text, true);
    case OptionType::Float: return number(text, false);
    case OptionType::Bool:
      if (text == "true" || text == "1") return true;
      if (text == "false" || text == "0") return false;
      throw UserError("--opt " + spec.name + "=" + text + ": write true or false");
    case OptionType::String: return text;
    case OptionType::IntList:
    case OptionType::FloatList: {
      std::string body = text;
      if (!body.empty() && body.front() == '[') body.erase(0, 1);
      if (!body.empty() && body.back() == ']') body.pop_back();
      json list = json::array();
      std::size_t start = 0;
      while (start <= body.size() && !body.empty()) {
        const std::size_t comma = body.find(',', start);
        std::string item = body.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        while (!item.empty() && item.front() == ' ') item.erase(0, 1);
        while (!item.empty() && item.back() == ' ') item.pop_back();
        list.push_back(number(item, spec.type == OptionType::IntList));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      return list;
    }
    case OptionType::Bytes: return text;
    case OptionType::Amount: return number(text, false);
  }
  return text;
}

}  // namespace

bool register_attention_kernel(int order, AttentionKernel kernel) {
  registry().add(order, std::move(kernel));
  return true;
}

const std::vector<AttentionKernel>& attention_kernels() { return registry().entries(); }

const AttentionKernel& find_attention_kernel(const std::string& name) {
  std::string known;
  for (const auto& k : attention_kernels()) {
    if (k.name == name) return k;
    known += (known.empty() ? "" : ", ") + k.name;
  }
  throw UserError("unknown attention kernel '" + name + "'; known kernels: " + known);
}

json kernel_options(const AttentionKernel& kernel, const std::vector<std::string>& assignments) {
  json out = kernel.schema.defaults(json::object());
  for (const auto& a : assignments) {
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UserError("--opt '" + a + "': write key=value (options of " + kernel.name + ": " +
                      [&] {
                        std::string s;
                        for (const auto& n : kernel.schema.names()) s += (s.empty() ? "" : ", ") + n;
                        return s;
                      }() +
                      ")");
    const std::string key = a.substr(0, eq), text = a.substr(eq + 1);
    const OptionSpec* spec = kernel.schema.find(key);
    if (!spec) {
      std::string names;
      for (const auto& n : kernel.schema.names()) names += (names.empty() ? "" : ", ") + n;
      throw UserError("--opt " + key + ": " + kernel.name + " has no option '" + key + "'; its options: " + names);
    }
    out[key] = check_json_value(parse_text_value(text, *spec), *spec, "--opt " + key);
  }
  return out;
}

}  // namespace lrb
