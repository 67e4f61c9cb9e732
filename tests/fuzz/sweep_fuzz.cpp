// libFuzzer target: the sweep front end (suite/config) on any text as a sweep file: parse,
// validate, expand. Whatever the text, the answer is a sweep or a UserError (which says
// where and what to write); any other exception, a crash or a hang is a bug.
// The registry holds one task and one model, declared below, whose option schemas use
// every kind of option (each type, bounds, choices, a derived default, a rule across
// options, a list that is not an axis), so that the [[task]] and [[model]] tables reach
// validation and expansion without linking LibTorch. Seeds: tests/fuzz/corpus/sweep/.
#include <cstdint>
#include <string>
#include <string_view>

#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"
#include "suite/core/errors.h"
#include "suite/registry/registry.h"

namespace {

lrb::OptionSpec option(std::string name, lrb::OptionType type, lrb::json def) {
  lrb::OptionSpec s;
  s.name = std::move(name);
  s.type = type;
  s.default_value = std::move(def);
  s.help = "fuzz";
  return s;
}

lrb::TaskEntry fuzz_task() {
  lrb::TaskEntry t;
  t.name = "t";
  t.summary = "tokens task for the fuzzer";
  auto size = option("train_size", lrb::OptionType::Int, 64);
  size.min = 1;
  size.max = 1 << 20;
  auto noise = option("noise", lrb::OptionType::Float, 0.1);
  noise.min = 0;
  noise.max = 1;
  auto kind = option("kind", lrb::OptionType::String, "a");
  kind.choices = {"a", "b", "c"};
  auto file = option("file", lrb::OptionType::String, "");
  t.schema.options = {size, noise, kind, file, option("shuffle", lrb::OptionType::Bool, true)};
  t.describe = [](const lrb::json& options, std::int64_t seq_len) {
    lrb::TaskInfo info;
    info.modality = lrb::Modality::Tokens;
    info.input_shape = {seq_len};
    info.num_classes = options.at("kind") == "a" ? 2 : 10;
    info.vocab_size = 16;
    info.metrics = {"accuracy", "macro_f1"};
    return info;
  };
  return t;
}

lrb::ModelEntry fuzz_model() {
  lrb::ModelEntry m;
  m.name = "m";
  m.summary = "model for the fuzzer";
  m.modalities = {lrb::Modality::Tokens};
  auto dim = option("dim", lrb::OptionType::Int, 32);
  dim.min = 1;
  dim.max = 4096;
  auto heads = option("heads", lrb::OptionType::Int, 4);
  heads.min = 1;
  auto depth = option("depth", lrb::OptionType::Int, lrb::json());
  depth.derived = true;
  auto widths = option("widths", lrb::OptionType::IntList, lrb::json::array({8, 16}));
  widths.axis = false;
  widths.min = 1;
  auto drop = option("dropout", lrb::OptionType::FloatList, lrb::json::array({0.0}));
  drop.min = 0;
  drop.max = 1;
  auto attention = option("attention", lrb::OptionType::String, "softmax");
  attention.choices = {"softmax", "linear"};
  m.schema.options = {dim, heads, depth, widths, drop, attention, option("budget", lrb::OptionType::Bytes, "1MiB")};
  m.schema.resolve = [](lrb::json& o, const lrb::json& task) {
    if (o.at("depth").is_null()) o["depth"] = task.at("input_shape").at(0).get<std::int64_t>() > 256 ? 4 : 2;
    if (o.at("dim").get<std::int64_t>() % o.at("heads").get<std::int64_t>() != 0)
      throw lrb::OptionError(std::vector<std::string>{"dim", "heads"}, "dim must be a multiple of heads");
  };
  m.flops = [](const lrb::json& o, const lrb::TaskInfo& task) {
    return 2.0 * static_cast<double>(o.at("dim").get<std::int64_t>()) * static_cast<double>(task.tokens());
  };
  auto merge = option("merge", lrb::OptionType::Int, 0);
  merge.min = 0;
  m.inference.options = {merge};
  return m;
}

LRB_REGISTER_TASK(fuzz_task());
LRB_REGISTER_MODEL(fuzz_model());

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const lrb::SweepSpec spec = lrb::parse_sweep(text, "fuzz.toml");
    // The run limit bounds what expansion may build; larger sweeps are refused up front.
    (void)lrb::expand_sweep(spec);
  } catch (const lrb::UserError&) {
  }
  return 0;
}
