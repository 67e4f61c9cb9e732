#include "suite/config/sweep_spec.h"

#include <toml++/toml.h>

#include <fmt/format.h>

#include "suite/config/claim_spec.h"
#include "suite/config/run_streams.h"
#include "suite/core/files.h"
#include "suite/core/text.h"
#include "suite/registry/registry.h"

namespace lrb {

const OptionSchema& sweep_schema() {
  static const OptionSchema schema{{
      {"name", OptionType::String, json(), "sweep name: letters, digits, '.', '_' or '-'", {}, {}, {}, false, false},
      {"seeds", OptionType::IntList, json(3), "a count n (seed indices 0..n-1), a list of seed indices, or a sequential design { first = 5, step = 5, max = 60 } (seeds drawn while a claim is open)", {}, 0, {}, false, false},
      {"vary", OptionType::String, json(""), "a table of random streams, each crossed at its own indices within every seed: vary = { init = 4, order = 4 } runs 16 runs a seed (streams: data, order, init, dropout; lrbench list streams)", {}, {}, {}, false, false},
      {"fixed", OptionType::String, json(""), "a list of random streams held at index 0 in every run: fixed = [\"data\"] (the others follow the seed)", {}, {}, {}, false, false},
      {"budget", OptionType::String, json(""), "a sequential study's wall time (\"3h\", \"90m\", \"1h30m\"): no run starts once it is spent", {}, {}, {}, false, false},
      {"step_time_limit", OptionType::String, json(""), "the longest a model call may take (a training step, an evaluation batch, a trial forward: \"10m\", \"90s\"): a run whose call takes longer is recorded failed with the reason and the process ends (a model call cannot be interrupted); none by default", {}, {}, {}, false, false},
      {"base_seed", OptionType::Int, json(0), "mixed into every random stream of every run", {}, 0, kInt64Max, false, false},
      {"device", OptionType::String, json("cpu"), "where runs execute", {"cpu", "cuda"}, {}, {}, false, false},
      {"threads", OptionType::Int, json("auto"), "intra-op threads per rank: \"auto\" (cores on the node / ranks on the node) or a number", {}, 1, 1024, false, false},
      {"checkpoint_every", OptionType::Int, json(0), "steps between periodic checkpoints (0: only when stopped by a signal)", {}, 0, {}, false, false},
      {"max_runs", OptionType::Int, json(kDefaultMaxRuns), "refuse a sweep that expands to more runs than this (counted before any run is built)", {}, 1, kMaxRunsLimit, false, false},
      {"ranks_per_run", OptionType::Int, json(1), "MPI ranks that train one run together (data parallel; must divide the job's rank count)", {}, 1, kMaxRanksPerRun, false, false},
      {"runs_per_gpu", OptionType::Int, json(1), "ranks, each with its own runs, that may share one GPU (device = \"cuda\"): k fills a GPU that one small run leaves idle; their time figures are recorded as shared (provenance gpu.shared_by) and never compared with exclusive runs", {}, 1, kMaxRunsPerGpu, false, false},
      {"exchange", OptionType::String, json("auto"), "how a data-parallel group sums its gradients: \"nccl\" on the GPUs, \"mpi\" through host memory, \"auto\" (NCCL for device = \"cuda\" in a build with it, else MPI)", {"auto", "mpi", "nccl"}, {}, {}, false, false},
      {"description", OptionType::String, json(""), "free text, kept with the results", {}, {}, {}, false, false},
  }};
  return schema;
}

namespace {

// seeds = { first = 5, step = 5, max = 60 }: every key known and an integer in range.
SequentialSeeds parse_sequential_seeds(const toml::table& t, const std::string& file) {
  static const std::vector<std::string> kKeys = {"first", "step", "max"};
  SequentialSeeds d;
  for (const auto& [k, node] : t) {
    const std::string key(k.str());
    const SourceLocation at{file, static_cast<int>(k.source().begin.line), static_cast<int>(k.source().begin.column)};
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
      throw UserError(at, "unknown key '" + key + "' in [sweep] seeds: a sequential design takes first, step and max" +
                              suggestion(key, kKeys));
    auto n = node.as_integer();
    if (!n) throw UserError(location_of(node, file), "in [sweep] seeds, '" + key + "' must be an integer");
    const std::int64_t v = n->get();
    const SourceLocation vat = location_of(node, file);
    if (key == "first") {
      if (v < 2 || v > 100000)
        throw UserError(vat, "in [sweep] seeds, 'first' must be between 2 and 100000: a look needs at least 2 paired seeds");
      d.first = v;
    } else if (key == "step") {
      if (v < 1 || v > 100000) throw UserError(vat, "in [sweep] seeds, 'step' must be between 1 and 100000");
      d.step = v;
    } else {
      if (v < 2 || v > 100000) throw UserError(vat, "in [sweep] seeds, 'max' must be between 2 and 100000");
      d.max = v;
    }
  }
  for (const auto& key : kKeys)
    if (!t.contains(key))
      throw UserError(location_of(t, file), "in [sweep] seeds, a sequential design needs '" + key +
                                                "' (for example seeds = { first = 5, step = 5, max = 60 })");
  if (d.max < d.first)
    throw UserError(location_of(*t.get("max"), file), fmt::format("in [sweep] seeds, 'max' ({}) must be at least 'first' ({})", d.max, d.first));
  if (d.looks() > kMaxLooks)
    throw UserError(location_of(*t.get("step"), file), fmt::format("in [sweep] seeds, this design takes {} looks, more than {}: take a "
                                                                   "larger 'step' (a look every {} seeds or more)", d.looks(), kMaxLooks,
                                                                   (d.max - d.first + kMaxLooks - 2) / (kMaxLooks - 1)));
  return d;
}

const std::vector<std::string> kTopLevel = {"sweep", "train", "task", "model", "measure", "claim", "variant", "evaluate"};

SourceLocation key_location(const toml::table& t, const std::string& key, const std::string& file) {
  for (const auto& [k, v] : t)
    if (k.str() == key) return SourceLocation{file, static_cast<int>(k.source().begin.line), static_cast<int>(k.source().begin.column)};
  return location_of(t, file);
}

// A [sweep] wall time such as "3h" (sequential_design.h parse_budget), in seconds.
double duration_seconds(const toml::node& node, const SourceLocation& at, const std::string& key, const std::string& examples) {
  const auto text = node.as_string();
  if (!text) throw UserError(at, "in [sweep], '" + key + "' must be a string such as " + examples);
  std::string problem;
  const auto seconds = parse_budget(text->get(), problem);
  if (!seconds) throw UserError(at, "in [sweep], '" + key + "' " + problem);
  return *seconds;
}

// A stream's name as the file writes it: one of kStreams.
std::string stream_name(const std::string& name, const SourceLocation& at, const std::string& where) {
  std::vector<std::string> names;
  for (const auto& s : kStreams) names.emplace_back(s.name);
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw UserError(at, "in [sweep] " + where + ", unknown random stream '" + name + "'" + suggestion(name, names) +
                            ": the streams are " + join(names, ", ") + " (lrbench list streams)");
  return name;
}

// vary = { init = 4, order = 4 }: each stream known, its count of indices in range; kept in
// kStreams' order, so that the expansion's order does not follow the file's.
std::vector<std::pair<std::string, std::int64_t>> parse_vary(const toml::node& node, const SourceLocation& at, const std::string& file) {
  const auto* t = node.as_table();
  if (!t || t->empty())
    throw UserError(at, "in [sweep], 'vary' must be a table of streams and their number of indices, for example "
                        "vary = { init = 4, order = 4 }");
  std::map<std::string, std::int64_t> levels;
  for (const auto& [k, v] : *t) {
    const SourceLocation kat{file, static_cast<int>(k.source().begin.line), static_cast<int>(k.source().begin.column)};
    const std::string name = stream_name(std::string(k.str()), kat, "vary");
    const auto* n = v.as_integer();
    if (!n || n->get() < 2 || n->get() > kMaxStreamIndex + 1)
      throw UserError(location_of(v, file), fmt::format("in [sweep] vary, '{}' must be a number of indices between 2 and {} "
                                                        "(to hold a stream at one index, list it in fixed)",
                                                        name, kMaxStreamIndex + 1));
    levels[name] = n->get();
  }
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const auto& s : kStreams)
    if (const auto it = levels.find(std::string(s.name)); it != levels.end()) out.emplace_back(it->first, it->second);
  return out;
}

// fixed = ["data"]: each stream known and named once.
std::vector<std::string> parse_fixed(const toml::node& node, const SourceLocation& at, const std::string& file) {
  const auto* a = node.as_array();
  if (!a || a->empty()) throw UserError(at, "in [sweep], 'fixed' must be a list of streams, for example fixed = [\"data\"]");
  std::vector<std::string> out;
  for (const auto& el : *a) {
    const auto* name = el.as_string();
    if (!name) throw UserError(location_of(el, file), "in [sweep] fixed, each entry must be a stream's name (a string)");
    const std::string s = stream_name(name->get(), location_of(el, file), "fixed");
    if (std::find(out.begin(), out.end(), s) != out.end())
      throw UserError(location_of(el, file), "in [sweep] fixed, '" + s + "' is listed twice");
    out.push_back(s);
  }
  return out;
}

// Ranks share a GPU only where there are GPUs, and a data-parallel group's members each need
// their own (NCCL refuses two members on one device).
void check_runs_per_gpu(const SweepSettings& sweep) {
  if (sweep.runs_per_gpu == 1) return;
  if (sweep.device != "cuda")
    throw UserError(sweep.runs_per_gpu_at, "in [sweep], runs_per_gpu shares GPUs between ranks, and this sweep runs on device = \"" +
                                               sweep.device + "\": set device = \"cuda\", or remove runs_per_gpu (on a CPU, "
                                               "start more ranks and set threads)");
  if (sweep.ranks_per_run > 1)
    throw UserError(sweep.runs_per_gpu_at, "in [sweep], runs_per_gpu > 1 with ranks_per_run > 1: the ranks of a data-parallel "
                                           "run each need a GPU of their own; use one or the other");
}

// A stream is varied or fixed, not both; with named streams every seed index fits the
// pairing key (run_streams.h).
void check_streams(const SweepSettings& sweep) {
  for (const auto& f : sweep.fixed)
    for (const auto& v : sweep.vary)
      if (v.first == f)
        throw UserError(sweep.fixed_at, "in [sweep], stream '" + f + "' is both fixed and varied: remove it from one of them");
  if (sweep.vary.empty() && sweep.fixed.empty()) return;
  const SourceLocation& at = sweep.vary.empty() ? sweep.fixed_at : sweep.vary_at;
  for (const std::int64_t s : sweep.seeds)
    if (s < 0 || s > kMaxStreamIndex)
      throw UserError(at, fmt::format("in [sweep], with vary or fixed every seed index must be between 0 and {} (seed {} is not): "
                                      "a run's stream indices are packed into the key that pairs runs",
                                      kMaxStreamIndex, s));
}

// seeds = 3, [0, 1, 2] or { first, step, max }.
void parse_seeds(const toml::node& node, const OptionSpec& o, const SourceLocation& vat, const std::string& file, SweepSpec& spec) {
  const std::string section = "[sweep]";
  if (auto n = node.as_integer()) {
    if (n->get() < 1 || n->get() > 100000)
      throw UserError(vat, "in [sweep], 'seeds' as a count must be between 1 and 100000");
    spec.sweep.seeds.clear();
    for (std::int64_t i = 0; i < n->get(); ++i) spec.sweep.seeds.push_back(i);
  } else if (node.is_array()) {
    json list = read_value(node, o, file, section);
    spec.sweep.seeds = list.get<std::vector<std::int64_t>>();
    if (spec.sweep.seeds.empty()) throw UserError(vat, "in [sweep], 'seeds' is an empty list");
    std::vector<std::int64_t> sorted = spec.sweep.seeds;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      throw UserError(vat, "in [sweep], 'seeds' lists a seed index twice");
  } else if (auto design = node.as_table()) {
    spec.sweep.sequential = parse_sequential_seeds(*design, file);
    spec.sweep.sequential_at = vat;
    spec.sweep.seeds.clear();
    for (std::int64_t i = 0; i < spec.sweep.sequential->max; ++i) spec.sweep.seeds.push_back(i);
  } else {
    throw UserError(vat, "in [sweep], 'seeds' must be a count (3), a list of seed indices ([0, 1, 2]) or a sequential "
                         "design ({ first = 5, step = 5, max = 60 })");
  }
}

void parse_sweep_table(const toml::table& t, const std::string& file, SweepSpec& spec) {
  const OptionSchema& schema = sweep_schema();
  const std::string section = "[sweep]";
  for (const auto& [k, node] : t) {
    const std::string key(k.str());
    const SourceLocation at{file, static_cast<int>(k.source().begin.line), static_cast<int>(k.source().begin.column)};
    const OptionSpec* o = schema.find(key);
    if (!o) throw UserError(at, "unknown key '" + key + "' in " + section + suggestion(key, schema.names()));
    const SourceLocation vat = location_of(node, file);
    if (key == "seeds") {
      parse_seeds(node, *o, vat, file, spec);
    } else if (key == "vary") {
      spec.sweep.vary = parse_vary(node, vat, file);
      spec.sweep.vary_at = vat;
    } else if (key == "fixed") {
      spec.sweep.fixed = parse_fixed(node, vat, file);
      spec.sweep.fixed_at = vat;
    } else if (key == "budget") {
      spec.sweep.budget_seconds = duration_seconds(node, vat, "budget", "\"3h\" or \"90m\"");
      spec.sweep.budget_at = vat;
    } else if (key == "step_time_limit") {
      spec.sweep.step_time_limit = duration_seconds(node, vat, "step_time_limit", "\"10m\" or \"90s\"");
    } else if (key == "threads") {
      if (auto s = node.as_string()) {
        if (s->get() != "auto")
          throw UserError(vat, "in [sweep], 'threads' must be \"auto\" or a number of threads, not \"" + s->get() + "\"");
        spec.sweep.threads = 0;
      } else {
        spec.sweep.threads = static_cast<int>(read_value(node, *o, file, section).get<std::int64_t>());
      }
    } else {
      if (node.is_array()) throw UserError(vat, "in [sweep], '" + key + "' takes a single value, not a list");
      json v = read_value(node, *o, file, section);
      if (key == "name") {
        spec.sweep.name = v.get<std::string>();
        if (const std::string problem = name_problem(spec.sweep.name); !problem.empty())
          throw UserError(vat, "in [sweep], 'name' " + problem);
      } else if (key == "max_runs") {
        spec.sweep.max_runs = v.get<std::int64_t>();
      } else if (key == "base_seed") {
        spec.sweep.base_seed = v.get<std::uint64_t>();
      } else if (key == "device") {
        spec.sweep.device = v.get<std::string>();
        spec.sweep.device_at = vat;
      } else if (key == "checkpoint_every") {
        spec.sweep.checkpoint_every = v.get<std::int64_t>();
      } else if (key == "ranks_per_run") {
        spec.sweep.ranks_per_run = static_cast<int>(v.get<std::int64_t>());
        spec.sweep.ranks_per_run_at = vat;
      } else if (key == "runs_per_gpu") {
        spec.sweep.runs_per_gpu = static_cast<int>(v.get<std::int64_t>());
        spec.sweep.runs_per_gpu_at = vat;
      } else if (key == "exchange") {
        spec.sweep.exchange = v.get<std::string>();
        spec.sweep.exchange_at = vat;
      }
    }
  }
  if (spec.sweep.exchange == "nccl" && spec.sweep.device != "cuda")
    throw UserError(spec.sweep.exchange_at, "in [sweep], exchange = \"nccl\" sums gradients on CUDA devices, and this sweep runs on "
                                            "device = \"" + spec.sweep.device + "\": set device = \"cuda\", or exchange = \"mpi\" (or \"auto\")");
  check_runs_per_gpu(spec.sweep);
  check_streams(spec.sweep);
  if (spec.sweep.name.empty()) throw UserError(location_of(t, file), "[sweep] needs a 'name' (for example name = \"my-study\")");
  if (spec.sweep.budget_seconds && !spec.sweep.sequential)
    throw UserError(spec.sweep.budget_at, "in [sweep], 'budget' bounds a sequential study: give seeds as { first, step, max } "
                                          "(or remove 'budget': a fixed design runs every seed it lists)");
}

std::vector<const toml::table*> tables_of(const toml::node& node, const std::string& key, const std::string& file) {
  std::vector<const toml::table*> out;
  if (auto arr = node.as_array()) {
    if (arr->empty())
      throw UserError(location_of(node, file), "'" + key + "' is an empty list: a sweep needs at least one [[" + key +
                                                   "]] table (lrbench list " + key + "s shows them)");
    for (const auto& el : *arr) {
      auto t = el.as_table();
      if (!t) throw UserError(location_of(el, file), "'" + key + "' must be a table: write [[" + key + "]]");
      out.push_back(t);
    }
  } else if (auto t = node.as_table()) {
    throw UserError(location_of(*t, file), "write [[" + key + "]] (an array of tables, one per " + key + "), not [" + key + "]");
  } else {
    throw UserError(location_of(node, file), "'" + key + "' must be written as [[" + key + "]] tables");
  }
  return out;
}

std::string block_name(const toml::table& t, const std::string& kind, const std::vector<std::string>& registered,
                       const std::string& file) {
  auto n = t.get("name");
  if (!n) throw UserError(location_of(t, file), "this [[" + kind + "]] needs a 'name'; registered: " + join(registered, ", "));
  auto s = n->as_string();
  if (!s) throw UserError(location_of(*n, file), "the " + kind + " 'name' must be a string");
  const std::string name = s->get();
  if (std::find(registered.begin(), registered.end(), name) == registered.end())
    throw UserError(location_of(*n, file), "unknown " + kind + " '" + name + "'" + suggestion(name, registered) +
                                               " (lrbench list shows them all)");
  return name;
}

Block parse_task(const toml::table& t, const std::string& file) {
  const auto& reg = TaskRegistry::instance();
  Block b;
  b.name = block_name(t, "task", reg.names(), file);
  b.where = location_of(t, file);
  const TaskEntry& entry = *reg.find(b.name);
  const std::string section = "[[task]] '" + b.name + "'";
  static const OptionSpec seq_len_spec{"seq_len", OptionType::Int, json(), "input length in tokens (a list is an axis)", {}, 1, 1 << 24};
  if (auto sl = t.get("seq_len")) {
    if (!entry.uses_seq_len)
      throw UserError(key_location(t, "seq_len", file), "task '" + b.name + "' has a fixed input size; remove 'seq_len'");
    OptionAxis axis{"seq_len", {}, key_location(t, "seq_len", file)};
    if (auto arr = sl->as_array()) {
      if (arr->empty()) throw UserError(location_of(*sl, file), "in " + section + ", 'seq_len' is an empty list");
      for (const auto& el : *arr) {
        json v = read_value(el, seq_len_spec, file, section);
        if (std::find(axis.values.begin(), axis.values.end(), v) != axis.values.end())
          throw UserError(location_of(el, file), "in " + section + ", 'seq_len' lists " + v.dump() + " twice");
        axis.values.push_back(std::move(v));
      }
    } else {
      axis.values.push_back(read_value(*sl, seq_len_spec, file, section));
    }
    b.axes.push_back(std::move(axis));
  } else if (entry.uses_seq_len) {
    throw UserError(b.where, section + " needs 'seq_len' (a length, or a list of lengths)");
  }
  auto rest = read_options(t, entry.schema, {"name", "seq_len"}, file, section);
  b.axes.insert(b.axes.end(), rest.begin(), rest.end());
  return b;
}

// Sizes above this many parameters are matched only by setting the width: the search
// builds the model at widths up to about twice the answer.
constexpr double kLargestParameterMatch = 2.5e8;

// `option = { match = "params", to = 1e6 }` in a [[model]] table.
SizeMatch parse_size_match(const std::string& option, const toml::table& t, const SourceLocation& at, const ModelEntry& entry,
                           const std::string& file, const std::string& section) {
  const OptionSpec* o = entry.schema.find(option);
  if (!o) throw UserError(at, "unknown key '" + option + "' in " + section + suggestion(option, entry.schema.names()));
  const std::string where = "in " + section + ", '" + option + "' = { match = ..., to = ... }";
  if (o->type != OptionType::Int)
    throw UserError(at, where + ": only an integer option (a width) can be chosen to match a size; '" + option + "' is " +
                            type_name(o->type));
  SizeMatch m;
  m.option = option;
  m.where = at;
  static const std::vector<std::string> kKeys = {"match", "to"};
  for (const auto& [k, node] : t) {
    const std::string key(k.str());
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
      throw UserError(key_location(t, key, file), where + ": unknown key '" + key + "'" + suggestion(key, kKeys));
  }
  const toml::node* figure = t.get("match");
  if (!figure || !figure->as_string() || (figure->as_string()->get() != "params" && figure->as_string()->get() != "flops"))
    throw UserError(figure ? location_of(*figure, file) : at,
                    where + ": 'match' must be \"params\" (the model's parameter count) or \"flops\" (its forward FLOPs per sample)");
  m.figure = figure->as_string()->get();
  const toml::node* to = t.get("to");
  static const OptionSpec kTo{"to", OptionType::Amount, json(), "the count to come nearest", {}, 1.0, 1e30};
  if (!to) throw UserError(at, where + " needs 'to': the count to come nearest, e.g. to = 1e6 (or one per task: to = { listops = 1e5 })");
  m.to_where = location_of(*to, file);
  const auto read_target = [&](const toml::node& n) {
    const double v = read_value(n, kTo, file, section).get<double>();
    if (m.figure == "params" && v > kLargestParameterMatch)
      throw UserError(location_of(n, file), fmt::format("{}: sizes are matched up to {:g} parameters (the search builds the model at "
                                                        "each width it tries); set '{}' directly for larger models",
                                                        where, kLargestParameterMatch, option));
    return v;
  };
  if (const toml::table* per_task = to->as_table()) {
    // A task's inputs and classes change what a width costs: one target per task.
    for (const auto& [k, n] : *per_task) m.to_by_task[std::string(k.str())] = read_target(n);
    if (m.to_by_task.empty()) throw UserError(m.to_where, where + ": 'to' is an empty table: give a target per task, e.g. { listops = 1e5 }");
  } else {
    m.to = read_target(*to);
  }
  if (m.figure == "params" && !entry.params)
    throw UserError(at, where + ": model '" + entry.name + "' cannot count its parameters before it is built");
  if (m.figure == "flops" && !entry.flops)
    throw UserError(at, where + ": model '" + entry.name + "' has no FLOP count");
  return m;
}

Block parse_model(const toml::table& t, const std::string& file) {
  const auto& reg = ModelRegistry::instance();
  Block b;
  b.name = block_name(t, "model", reg.names(), file);
  b.where = location_of(t, file);
  const ModelEntry& entry = *reg.find(b.name);
  const std::string section = "[[model]] '" + b.name + "'";
  std::vector<std::string> reserved = {"name"};
  for (const auto& [k, node] : t)
    if (const toml::table* match = node.as_table()) {
      const std::string key(k.str());
      b.matches.push_back(parse_size_match(key, *match, key_location(t, key, file), entry, file, section));
      reserved.push_back(key);
    }
  b.axes = read_options(t, entry.schema, reserved, file, section);
  return b;
}

// [train] target = { metric = "accuracy", value = 0.7 }.
TargetSpec parse_target(const toml::node& node, const SourceLocation& at, const std::string& file) {
  const toml::table* t = node.as_table();
  const std::string example = "target = { metric = \"accuracy\", value = 0.7 }";
  if (!t) throw UserError(location_of(node, file), "in [train], 'target' must be a table: " + example);
  static const std::vector<std::string> kKeys = {"metric", "value"};
  for (const auto& [k, v] : *t) {
    const std::string key(k.str());
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end())
      throw UserError(key_location(*t, key, file), "in [train] target, unknown key '" + key + "'" + suggestion(key, kKeys) + " (" + example + ")");
  }
  TargetSpec target;
  target.where = at;
  const toml::node* metric = t->get("metric");
  if (!metric || !metric->as_string() || metric->as_string()->get().empty())
    throw UserError(metric ? location_of(*metric, file) : at,
                    "in [train] target, 'metric' must name an evaluation metric: a task metric such as \"accuracy\", or \"loss\"");
  target.written = metric->as_string()->get();
  target.metric = stored_metric_name(target.written);
  target.metric_where = location_of(*metric, file);
  if (target.metric.rfind("eval_", 0) != 0)
    throw UserError(target.metric_where, "in [train] target, '" + target.written + "' is not an evaluation metric: a target is "
                                         "reached by an evaluation (a task metric such as \"accuracy\", or \"loss\")");
  const toml::node* value = t->get("value");
  static const OptionSpec kValue{"value", OptionType::Float, json(), "the metric's value to reach", {}, {}, {}};
  if (!value) throw UserError(at, "in [train] target, 'value' is missing: the metric's value to reach (" + example + ")");
  target.value = read_value(*value, kValue, file, "[train] target").get<double>();
  return target;
}

const OptionAxis* train_axis(const SweepSpec& spec, const std::string& name) {
  for (const auto& a : spec.train)
    if (a.name == name) return &a;
  return nullptr;
}

// A per-task size target names the sweep's tasks, each of them.
void check_size_match_tasks(const SweepSpec& spec) {
  std::vector<std::string> tasks;
  for (const auto& b : spec.tasks) tasks.push_back(b.name);
  for (const auto& model : spec.models)
    for (const auto& m : model.matches) {
      if (m.to_by_task.empty()) continue;
      for (const auto& [task, to] : m.to_by_task)
        if (std::find(tasks.begin(), tasks.end(), task) == tasks.end())
          throw UserError(m.to_where, "in [[model]] '" + model.name + "', '" + m.option + "' has a target for task '" + task +
                                          "', which this sweep does not run" + suggestion(task, tasks));
      for (const auto& task : tasks)
        if (!m.to_by_task.count(task))
          throw UserError(m.to_where, "in [[model]] '" + model.name + "', '" + m.option + "' has no target for task '" + task +
                                          "': give one per task the sweep runs");
    }
}

// One of steps, flops and seconds sets a run's length; budgets are positive; a time budget
// is machine-bound and says on what; the warm-up is given one way; a target is checked at
// evaluations during training.
void check_run_length(const SweepSpec& spec) {
  const OptionAxis* length = nullptr;
  for (const auto& a : spec.train) {
    if (a.name != "steps" && a.name != "flops" && a.name != "seconds") continue;
    if (length)
      throw UserError(a.where, "in [train], '" + a.name + "' and '" + length->name + "' both set the run's length: give one of "
                               "steps, flops and seconds");
    length = &a;
    if (a.name != "steps")
      for (const auto& v : a.values)
        if (!(v.get<double>() > 0))
          throw UserError(a.where, "in [train], '" + a.name + "' = " + v.dump() + " is no budget: give a positive " +
                                       (a.name == "flops" ? "FLOP count (for example \"2e13\")" : "number of seconds"));
  }
  const std::string budget = length && length->name != "steps" ? length->name : "";
  if (spec.measure && (!budget.empty() || spec.target))
    throw UserError(!budget.empty() ? length->where : spec.target->where,
                    "[measure] times a few steps and trains nothing: remove " + (budget.empty() ? std::string("target") : budget) +
                        " from [train]");
  if (budget == "seconds") {
    if (!spec.sweep.device_at.known())
      throw UserError(length->where, "in [train], a time budget is machine-bound: name the device its seconds are measured on "
                                     "in [sweep] (device = \"cpu\" or \"cuda\"); reports warn when runs of different machines "
                                     "are compared");
    if (spec.sweep.ranks_per_run > 1)
      throw UserError(length->where, "in [train], a time budget with ranks_per_run > 1: the members of a run's group keep "
                                     "clocks of their own and must stop at one step; use steps or flops");
    if (const OptionAxis* w = train_axis(spec, "warmup_steps"))
      throw UserError(w->where, "in [train], a time budget warms up for a share of its time: use warmup_share, not warmup_steps");
  }
  if (const OptionAxis* share = train_axis(spec, "warmup_share"))
    if (const OptionAxis* w = train_axis(spec, "warmup_steps"))
      throw UserError(share->where, "in [train], 'warmup_share' and 'warmup_steps' (" + w->where.str() + ") both set the warm-up: give one");
  if (spec.target) {
    const OptionAxis* every = train_axis(spec, "eval_every");
    const bool evaluates = every && std::all_of(every->values.begin(), every->values.end(), [](const json& v) { return v.get<std::int64_t>() > 0; });
    if (!evaluates)
      throw UserError(every ? every->where : spec.target->where,
                      "in [train], a target is checked at each evaluation: set eval_every > 0 (steps between evaluations)");
  }
}

}  // namespace

std::optional<double> SizeMatch::target_on(const std::string& task) const {
  if (to_by_task.empty()) return to;
  const auto it = to_by_task.find(task);
  return it == to_by_task.end() ? std::nullopt : std::optional<double>(it->second);
}

namespace {

// The sweep's [[claim]]s, each made to select only this sweep's runs.
void parse_sweep_claims(const toml::table& root, const std::string& file, SweepSpec& spec) {
  if (spec.sweep.sequential && !root.get("claim"))
    throw UserError(spec.sweep.sequential_at, "in [sweep], a sequential design draws more seeds only while a claim is open, "
                                              "and this sweep states no [[claim]]: add the claims it tests, or give seeds as a "
                                              "count (seeds = 5)");
  if (const auto* claims = root.get("claim")) {
    tables_of(*claims, "claim", file);  // the same message for [claim] as for [task]
    spec.claims = parse_claims(*claims->as_array(), file);
    for (const auto& c : spec.claims)
      if (c.kind == ClaimKind::Variance && spec.sweep.sequential)
        throw UserError(c.where, "[[claim]] '" + c.name + "' (variance) reads a complete crossing of streams, and a sequential "
                                 "design draws seeds while claims are open: state it in a sweep with seeds as a count and [sweep] vary");
    // A claim is about this sweep's runs: results of another sweep in the same report
    // (another base seed, device or measurement) must not count as its cells.
    for (auto& c : spec.claims)
      for (CellSelector* side : {&c.a, &c.b}) {
        if (side->match.empty()) continue;
        side->match.emplace_back("base_seed", spec.sweep.base_seed);
        side->match.emplace_back("device", spec.sweep.device);
        if (spec.sweep.ranks_per_run > 1) side->match.emplace_back("ranks_per_run", spec.sweep.ranks_per_run);
        if (spec.measure) side->match.emplace_back("measure", spec.measure->to_json());
      }
  }
}

}  // namespace

SweepSpec parse_sweep(std::string_view text, const std::string& file) {
  SweepSpec spec;
  spec.file = file;
  toml::table root;
  try {
    root = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw UserError(SourceLocation{file, static_cast<int>(b.line), static_cast<int>(b.column)},
                    "TOML syntax error: " + std::string(e.description()));
  }
  for (const auto& [k, node] : root) {
    const std::string key(k.str());
    if (std::find(kTopLevel.begin(), kTopLevel.end(), key) == kTopLevel.end())
      throw UserError(SourceLocation{file, static_cast<int>(k.source().begin.line), static_cast<int>(k.source().begin.column)},
                      "unknown section '" + key + "'" + suggestion(key, kTopLevel));
  }
  const auto* sweep = root.get("sweep");
  if (!sweep || !sweep->is_table()) throw UserError(SourceLocation{file, 1, 1}, "the file needs a [sweep] table with at least a name");
  spec.sweep.seeds = {0, 1, 2};
  parse_sweep_table(*sweep->as_table(), file, spec);
  if (const auto* train = root.get("train")) {
    if (!train->is_table()) throw UserError(location_of(*train, file), "'train' must be a table: write [train]");
    spec.train = read_options(*train->as_table(), train_schema(), {"target"}, file, "[train]");
    if (const toml::node* target = train->as_table()->get("target"))
      spec.target = parse_target(*target, key_location(*train->as_table(), "target", file), file);
  }
  if (const auto* measure = root.get("measure")) {
    if (!measure->is_table()) throw UserError(location_of(*measure, file), "'measure' must be a table: write [measure]");
    json resolved = json::object();
    for (const auto& o : measure_schema().options) resolved[o.name] = o.default_value;
    for (const auto& axis : read_options(*measure->as_table(), measure_schema(), {}, file, "[measure]"))
      resolved[axis.name] = axis.values.at(0);
    spec.measure = MeasureSettings::from_json(resolved);
  }
  const auto* tasks = root.get("task");
  if (!tasks) throw UserError(SourceLocation{file, 1, 1}, "the sweep has no [[task]]; add one (lrbench list tasks shows them)");
  for (const auto* t : tables_of(*tasks, "task", file)) spec.tasks.push_back(parse_task(*t, file));
  const auto* models = root.get("model");
  if (!models) throw UserError(SourceLocation{file, 1, 1}, "the sweep has no [[model]]; add one (lrbench list models shows them)");
  for (const auto* t : tables_of(*models, "model", file)) spec.models.push_back(parse_model(*t, file));
  const auto* evaluate = root.get("evaluate");
  if (evaluate && !evaluate->is_table()) throw UserError(location_of(*evaluate, file), "'evaluate' must be a table: write [evaluate]");
  if (const auto* variants = root.get("variant")) {
    tables_of(*variants, "variant", file);
    if (spec.measure)
      throw UserError(location_of(*variants, file), "[[variant]] evaluates trained weights again; a [measure] sweep trains nothing");
    spec.variants = parse_variants(*variants->as_array(), file);
    for (const auto& v : spec.variants)
      if (std::none_of(spec.models.begin(), spec.models.end(), [&](const Block& b) { return b.name == v.model; }))
        throw UserError(v.where, "[[variant]] '" + v.name + "' is for model '" + v.model + "', which no [[model]] of this sweep runs");
    spec.evaluate = parse_evaluate(evaluate ? evaluate->as_table() : nullptr, file);
  } else if (evaluate) {
    throw UserError(location_of(*evaluate, file), "[evaluate] says how evaluation variants are measured; add [[variant]] tables, or remove it");
  }
  check_run_length(spec);
  check_size_match_tasks(spec);
  parse_sweep_claims(root, file, spec);
  return spec;
}

SweepSpec load_sweep_file(const std::filesystem::path& path) {
  // Only a regular file of sane size: not /dev/zero, a FIFO, or a file of gigabytes.
  return parse_sweep(read_user_file(path, kMaxSweepFileBytes, "sweep file"), path.string());
}

}  // namespace lrb
