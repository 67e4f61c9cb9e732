#include "suite/config/expand.h"
#include "suite/config/run_streams.h"
#include "suite/config/setting_values.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "suite/config/size_match.h"
#include "suite/core/text.h"
#include "suite/registry/registry.h"

namespace lrb {
namespace {

// Every combination of the axes' values, first axis outermost.
std::vector<std::vector<std::pair<const OptionAxis*, json>>> cartesian(const std::vector<OptionAxis>& axes) {
  std::vector<std::vector<std::pair<const OptionAxis*, json>>> out(1);
  for (const auto& axis : axes) {
    std::vector<std::vector<std::pair<const OptionAxis*, json>>> next;
    for (const auto& partial : out)
      for (const auto& v : axis.values) {
        auto p = partial;
        p.emplace_back(&axis, v);
        next.push_back(std::move(p));
      }
    out = std::move(next);
  }
  return out;
}

std::string describe_choice(const std::vector<std::pair<const OptionAxis*, json>>& choice) {
  std::vector<std::string> parts;
  for (const auto& [axis, v] : choice)
    if (axis->values.size() > 1) parts.push_back(axis->name + "=" + setting_text(v));
  return join(parts, " ");
}

struct Resolved {
  json options;
  std::optional<std::string> error;
  SourceLocation where;
};

// Defaults, then the user's values, then the schema's resolve hook.
Resolved resolve_options(const OptionSchema& schema, const std::vector<std::pair<const OptionAxis*, json>>& choice,
                         const json& context, const SourceLocation& block_where, const std::string& section) {
  Resolved r;
  r.options = json::object();
  for (const auto& o : schema.options) r.options[o.name] = o.default_value;
  std::map<std::string, SourceLocation> where;
  for (const auto& [axis, v] : choice) {
    where[axis->name] = axis->where;
    if (axis->name != "seq_len") r.options[axis->name] = v;
  }
  try {
    if (schema.resolve) schema.resolve(r.options, context);
    for (const auto& o : schema.options)
      if (r.options[o.name].is_null())
        throw OptionError(o.name, "'" + o.name + "' is required (" + o.help + ")");
  } catch (const OptionError& e) {
    r.error = "in " + section + ": " + e.what();
    r.where = block_where;
    for (const auto& name : e.options)
      if (auto it = where.find(name); it != where.end()) {
        r.where = it->second;
        break;
      }
  }
  return r;
}

// a * b, saturating at int64's maximum: counts multiply without overflow.
std::int64_t times(std::int64_t a, std::int64_t b) {
  if (a != 0 && b > std::numeric_limits<std::int64_t>::max() / a) return std::numeric_limits<std::int64_t>::max();
  return a * b;
}
std::int64_t plus(std::int64_t a, std::int64_t b) {
  return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max() : a + b;
}
std::int64_t combinations(const std::vector<OptionAxis>& axes) {
  std::int64_t n = 1;
  for (const auto& axis : axes) n = times(n, static_cast<std::int64_t>(axis.values.size()));
  return n;
}

// A data-parallel run splits each step's global batch over its group: every rank needs a
// sample. A measurement reports one device's memory and time, so it runs on one rank.
void check_ranks_per_run(const SweepSpec& spec) {
  const int k = spec.sweep.ranks_per_run;
  if (k == 1) return;
  if (spec.measure)
    throw UserError(spec.sweep.ranks_per_run_at,
                    "ranks_per_run = " + std::to_string(k) +
                        " with [measure]: a measurement reports one device's memory and step time, so it runs on one "
                        "rank; remove ranks_per_run (or [measure])");
  for (const auto& axis : spec.train) {
    if (axis.name != "batch_size") continue;
    for (const auto& v : axis.values)
      if (v.get<std::int64_t>() < k)
        throw UserError(axis.where, "[train] batch_size = " + v.dump() + " is smaller than ranks_per_run = " +
                                        std::to_string(k) + " (" + spec.sweep.ranks_per_run_at.str() +
                                        "): each rank of a run trains on a slice of the global batch and needs at least one sample");
    return;
  }
  for (const auto& o : train_schema().options)
    if (o.name == "batch_size" && o.default_value.get<std::int64_t>() < k)
      throw UserError(spec.sweep.ranks_per_run_at, "ranks_per_run = " + std::to_string(k) + " is larger than the default batch_size (" +
                                                       o.default_value.dump() + "): set [train] batch_size to at least " +
                                                       std::to_string(k));
}

}  // namespace

std::int64_t count_runs_upper_bound(const SweepSpec& spec) {
  std::int64_t tasks = 0, models = 0;
  for (const auto& b : spec.tasks) tasks = plus(tasks, combinations(b.axes));
  for (const auto& b : spec.models) models = plus(models, combinations(b.axes));
  std::int64_t replicates = static_cast<std::int64_t>(spec.sweep.seeds.size());
  for (const auto& v : spec.sweep.vary) replicates = times(replicates, v.second);
  return times(times(times(tasks, models), combinations(spec.train)), replicates);
}

namespace {

// Counted before anything is built: a few large axes must not take the machine's memory.
void check_run_count(const SweepSpec& spec) {
  // A factorial of streams that takes the sweep over: said where the file asks for it.
  const SourceLocation at = spec.sweep.vary.empty() ? SourceLocation{spec.file, 0, 0} : spec.sweep.vary_at;
  if (const std::int64_t n = count_runs_upper_bound(spec); n > spec.sweep.max_runs)
    throw UserError(at,
                    "the sweep expands to " +
                        (n == std::numeric_limits<std::int64_t>::max() ? std::string("more than 9e18")
                                                                      : std::to_string(n)) +
                        " runs (task settings x model settings x [train] settings x seeds" +
                        std::string(spec.sweep.vary.empty() ? "" : " x the indices of each varied stream") +
                        "), more than its limit of " +
                        std::to_string(spec.sweep.max_runs) + "; shorten the axes, or raise [sweep] max_runs (at most " +
                        std::to_string(kMaxRunsLimit) + ")");
  if (spec.tasks.empty() || spec.models.empty())
    throw UserError(SourceLocation{spec.file, 0, 0}, "the sweep has no runs: it needs a [[task]] and a [[model]]");
}

// One task setting the runs are made for.
struct TaskState {
  std::string name;
  std::int64_t seq_len;
  json options;
  TaskInfo info;
  std::string label;
};

// Every [[task]] table's settings; one that cannot be made is skipped with its reason, a
// table with none that can is an error.
std::vector<TaskState> expand_tasks(const SweepSpec& spec, std::vector<SkippedCombination>& skipped) {
  const auto& tasks = TaskRegistry::instance();
  std::vector<TaskState> task_states;
  for (const auto& block : spec.tasks) {
    const TaskEntry& entry = *tasks.find(block.name);
    const std::string section = "[[task]] '" + block.name + "'";
    std::optional<UserError> first_error;
    std::size_t ok = 0;
    for (const auto& choice : cartesian(block.axes)) {
      std::int64_t seq_len = 0;
      for (const auto& [axis, v] : choice)
        if (axis->name == "seq_len") seq_len = v.get<std::int64_t>();
      Resolved r = resolve_options(entry.schema, choice, json{{"seq_len", seq_len}}, block.where, section);
      const std::string label = block.name + (describe_choice(choice).empty() ? "" : " " + describe_choice(choice));
      if (!r.error) {
        try {
          TaskInfo info = entry.describe(r.options, seq_len);
          if (!entry.uses_seq_len) seq_len = info.tokens();
          task_states.push_back({block.name, seq_len, r.options, info, label});
          ++ok;
          continue;
        } catch (const OptionError& e) {
          r.error = "in " + section + ": " + e.what();
          r.where = block.where;
        }
      }
      if (!first_error) first_error = UserError(r.where, *r.error);
      skipped.push_back({label, *r.error});
    }
    if (ok == 0) throw *first_error;
  }
  return task_states;
}

// A run's expected cost in FLOPs (the queue hands out the costliest first): its training
// steps, evaluations, a measurement's search, and its evaluation variants.
double run_cost(double flops, const TrainSettings& settings, const SweepSpec& spec, const json& evaluate) {
  const auto batch = static_cast<double>(settings.batch_size);
  // A time budget's steps are unknown until it runs: costed as its seconds at 10 GFLOP/s.
  const double steps = settings.time_budget() ? settings.seconds * 1e10 / std::max(1.0, 3.0 * flops * batch)
                                              : static_cast<double>(settings.steps);
  const auto every = static_cast<double>(settings.eval_every);
  const auto eval_size = static_cast<double>(settings.eval_size);
  const double evals = (every > 0 ? std::floor(steps / every) : 0) + 1;
  double cost = flops * (3.0 * steps * batch + evals * eval_size);
  // A measurement: a few steps at the batch size, then a search up to the budget.
  if (spec.measure) cost = flops * 3.0 * batch * (static_cast<double>(spec.measure->steps) + 1) * 8;
  if (!evaluate.is_null()) {
    // Each variant: a pass over the evaluation split beside the model as trained, then timings.
    double timed = 0;
    for (auto b : evaluate["batch_sizes"]) timed += b.get<double>();
    const double passes = 2.0 * eval_size + timed * (evaluate["repeats"].get<double>() + evaluate["warmup"].get<double>());
    cost += flops * passes * static_cast<double>(evaluate["variants"].size());
  }
  return cost;
}

// What identifies one run (its key is the digest of this JSON: run_spec.h).
json run_identity(const TaskState& ts, const std::string& model, const json& model_options, const json& match, const json& train,
                  std::int64_t seed, const json& streams, const SweepSpec& spec, const json& evaluate) {
  json s = {{"version", kRunSpecVersion},
            {"task", {{"name", ts.name}, {"seq_len", ts.seq_len}, {"options", ts.options}}},
            {"model", {{"name", model}, {"options", model_options}}},
            {"train", train_identity(train)},
            {"seed_index", seed},
            {"base_seed", spec.sweep.base_seed},
            {"device", spec.sweep.device}};
  // A size chosen to match a count: how it was chosen is part of the run (absent otherwise,
  // so every other run keeps its key).
  if (!match.empty()) s["model"]["match"] = match;
  // Streams that do not follow the seed (run_streams.h); absent when none is named.
  if (!streams.empty()) s["streams"] = streams;
  // Only measurement runs carry the key, so training runs keep their identity.
  if (spec.measure) s["measure"] = spec.measure->to_json();
  if (!evaluate.is_null()) s["evaluate"] = evaluate;
  // The group size changes the arithmetic (how the gradient is summed), so it is part of
  // the run; absent at 1, so single-rank runs keep their keys.
  if (spec.sweep.ranks_per_run > 1) s["ranks_per_run"] = spec.sweep.ranks_per_run;
  return s;
}

using Choice = std::vector<std::pair<const OptionAxis*, json>>;

// The block's size matches applied to its resolved options, in the order written: each
// option set to the width whose count comes nearest its target (size_match.h). Returns the
// spec's record of them ({option: {figure, to, count}}), and says what each became.
json apply_size_matches(const Block& block, const ModelEntry& entry, const Choice& choice, const TaskState& ts, Resolved& r,
                        std::vector<std::string>& derivations) {
  json record = json::object();
  if (block.matches.empty()) return record;
  const std::string section = "[[model]] '" + block.name + "'";
  Choice chosen = choice;
  std::vector<OptionAxis> fixed;  // one axis per matched option, holding its chosen value
  fixed.reserve(block.matches.size());
  for (const SizeMatch& m : block.matches) {
    const OptionSpec& o = *entry.schema.find(m.option);
    SizeSearch search;
    search.smallest = std::max<std::int64_t>(1, o.min ? static_cast<std::int64_t>(std::ceil(*o.min)) : 1);
    search.largest = o.max ? static_cast<std::int64_t>(std::min(*o.max, kDefaultIntMax)) : static_cast<std::int64_t>(kDefaultIntMax);
    const std::optional<double> to = m.target_on(ts.name);
    LRB_CHECK(to.has_value(), "a size match without a target for one of the sweep's tasks");
    search.to = *to;
    OptionAxis trial{m.option, {json()}, m.where};
    search.count = [&](std::int64_t width) -> std::optional<double> {
      Choice c = chosen;
      trial.values[0] = width;
      c.emplace_back(&trial, trial.values[0]);
      const Resolved at = resolve_options(entry.schema, c, ts.info.to_json(), block.where, section);
      if (at.error) return std::nullopt;
      const double n = m.figure == "params" ? entry.params(at.options, ts.info) : entry.flops(at.options, ts.info);
      return std::isfinite(n) ? std::optional<double>(n) : std::nullopt;
    };
    const SizeMatchResult found = match_size(search);
    if (!found.size)
      throw UserError(m.where, fmt::format("in {}, no {} gives {} near {:g} on task '{}': {}", section, m.option, m.figure, *to, ts.label,
                                           found.problem));
    fixed.push_back(OptionAxis{m.option, {found.size->value}, m.where});
    chosen.emplace_back(&fixed.back(), fixed.back().values[0]);
    record[m.option] = {{"figure", m.figure}, {"to", *to}, {"count", found.size->count}};
    derivations.push_back(fmt::format("{} / {}: {} = {} ({} {:.6g}, nearest {:g})", ts.label, block.name, m.option, found.size->value,
                                      m.figure, found.size->count, *to));
  }
  r = resolve_options(entry.schema, chosen, ts.info.to_json(), block.where, section);
  LRB_CHECK(!r.error, "a matched width stopped resolving");
  return record;
}

// A target names a metric the task evaluates.
void check_target(const SweepSpec& spec, const TaskState& ts) {
  if (!spec.target || spec.target->metric == "eval_loss") return;
  const auto& m = ts.info.metrics;
  if (std::find(m.begin(), m.end(), spec.target->metric.substr(5)) == m.end())
    throw UserError(spec.target->metric_where, "in [train] target, task '" + ts.name + "' has no metric '" + spec.target->written +
                                                   "': it evaluates " + join(m, ", ") + " (and loss)");
}

const OptionAxis* train_axis_named(const SweepSpec& spec, const std::string& name) {
  for (const auto& a : spec.train)
    if (a.name == name) return &a;
  return nullptr;
}

// The run's length and schedule from its budget: a FLOP budget gives
// floor(flops / (3 x forward FLOPs per sample x batch)) steps; warmup_share gives the
// warm-up in steps (under a time budget it stays a share of the time, runner.cpp).
void derive_length(json& tr, double flops_per_sample, const SweepSpec& spec, const std::string& label,
                   std::vector<std::string>& derivations) {
  const TrainSettings t = TrainSettings::from_json(tr);
  if (t.flops > 0) {
    const SourceLocation at = train_axis_named(spec, "flops")->where;
    if (!(std::isfinite(flops_per_sample) && flops_per_sample > 0))
      throw UserError(at, label + ": the model's FLOPs are not counted (a TorchScript model whose products lrbench does not count), "
                                  "so a FLOP budget cannot set its length; give steps instead");
    const double per_step = 3.0 * flops_per_sample * static_cast<double>(t.batch_size);
    const double steps = std::floor(t.flops / per_step);
    if (steps < 1)
      throw UserError(at, fmt::format("{}: a FLOP budget of {:g} gives no step (a step is 3 x {:.4g} FLOPs x {} samples = {:.4g}): "
                                      "give at least {:.4g}",
                                      label, t.flops, flops_per_sample, t.batch_size, per_step, per_step));
    if (steps > static_cast<double>(kMaxTrainSteps))
      throw UserError(at, fmt::format("{}: a FLOP budget of {:g} gives {:.4g} steps, more than {} (a step is {:.4g} FLOPs)", label,
                                      t.flops, steps, kMaxTrainSteps, per_step));
    tr["steps"] = static_cast<std::int64_t>(steps);
  }
  if (t.time_budget()) tr["steps"] = 0;
  if (t.warmup_share > 0 && !t.time_budget())
    tr["warmup_steps"] = static_cast<std::int64_t>(std::llround(t.warmup_share * tr["steps"].get<double>()));
  const std::int64_t steps = tr["steps"].get<std::int64_t>(), warmup = tr["warmup_steps"].get<std::int64_t>();
  if (t.flops > 0 && warmup >= steps && warmup > 0)
    throw UserError(train_axis_named(spec, "warmup_steps") ? train_axis_named(spec, "warmup_steps")->where : train_axis_named(spec, "flops")->where,
                    fmt::format("{}: the warm-up ({} steps) is not shorter than the {} steps the FLOP budget gives; use warmup_share",
                                label, warmup, steps));
  if (t.flops > 0)
    derivations.push_back(fmt::format("{}: flops {:g} -> {} steps of 3 x {:.4g} FLOPs x {} samples; warm-up {} steps, {} decay over {}",
                                      label, t.flops, steps, flops_per_sample, t.batch_size, warmup, t.schedule, steps - warmup));
  else if (t.time_budget())
    derivations.push_back(fmt::format("{}: trains for {:g} s of training steps on this sweep's device; warm-up {:g} % of the time, {} "
                                      "decay over the rest",
                                      label, t.seconds, 100 * t.warmup_share, t.schedule));
}

// The streams each run of one seed names: the fixed ones at index 0, and every combination
// of the varied ones' indices (the last stream fastest); one empty object without either.
std::vector<json> stream_indices_within_a_seed(const SweepSettings& sweep) {
  json base = json::object();
  for (const auto& f : sweep.fixed) base[f] = 0;
  std::vector<json> out{base};
  for (const auto& [name, levels] : sweep.vary) {
    std::vector<json> next;
    next.reserve(out.size() * static_cast<std::size_t>(levels));
    for (const json& partial : out)
      for (std::int64_t i = 0; i < levels; ++i) {
        next.push_back(partial);
        next.back()[name] = i;
      }
    out = std::move(next);
  }
  return out;
}

// Two blocks that resolve to the same experiment would run it once but count it twice.
void check_no_duplicate_runs(const std::vector<RunSpec>& runs, const std::vector<SourceLocation>& run_origin) {
  std::map<std::string, std::size_t> keys;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunSpec& r = runs[i];
    auto [it, fresh] = keys.emplace(r.key, i);
    if (!fresh)
      throw UserError(run_origin[i], "this table describes the same run as an earlier one (" + r.model_name() + " on " +
                                         r.task_name() + " seq_len " + std::to_string(r.seq_len()) + ", " +
                                         seed_label(r.spec) + "); remove the duplicate");
  }
}

}  // namespace

ExpandedSweep expand_sweep(const SweepSpec& spec) {
  check_run_count(spec);
  check_ranks_per_run(spec);
  ExpandedSweep out;
  const auto& models = ModelRegistry::instance();
  json train = json::object();
  for (const auto& o : train_schema().options) train[o.name] = o.default_value;
  if (spec.target) train["target"] = TrainTarget{spec.target->metric, spec.target->value}.to_json();
  const auto train_choices = cartesian(spec.train);
  const std::vector<json> stream_choices = stream_indices_within_a_seed(spec.sweep);
  const std::vector<TaskState> task_states = expand_tasks(spec, out.skipped);

  std::vector<SourceLocation> run_origin;  // the [[model]] table each run came from
  std::vector<std::size_t> model_ok(spec.models.size(), 0);
  std::vector<std::optional<UserError>> model_error(spec.models.size());
  for (const auto& ts : task_states) {
    check_target(spec, ts);
    for (std::size_t mi = 0; mi < spec.models.size(); ++mi) {
      const Block& block = spec.models[mi];
      const ModelEntry& entry = *models.find(block.name);
      const std::string section = "[[model]] '" + block.name + "'";
      for (const auto& choice : cartesian(block.axes)) {
        const std::string label = ts.label + " / " + block.name +
                                  (describe_choice(choice).empty() ? "" : " " + describe_choice(choice));
        if (std::find(entry.modalities.begin(), entry.modalities.end(), ts.info.modality) == entry.modalities.end()) {
          const std::string why = "model '" + block.name + "' does not take " + modality_name(ts.info.modality) +
                                  " inputs (task '" + ts.name + "')";
          if (!model_error[mi]) model_error[mi] = UserError(block.where, why);
          out.skipped.push_back({label, why});
          continue;
        }
        Resolved r = resolve_options(entry.schema, choice, ts.info.to_json(), block.where, section);
        if (r.error) {
          if (!model_error[mi]) model_error[mi] = UserError(r.where, *r.error);
          out.skipped.push_back({label, *r.error});
          continue;
        }
        ++model_ok[mi];
        const json match = apply_size_matches(block, entry, choice, ts, r, out.derivations);
        // A model whose FLOPs are not counted (NaN) is costed by its tokens, like one without a count.
        const double counted = entry.flops ? entry.flops(r.options, ts.info) : std::nan("");
        const double flops = std::isfinite(counted) ? counted : static_cast<double>(ts.info.tokens());
        // Evaluation variants of this model: part of the runs' identity (variant_spec.h).
        const json evaluate = spec.variants.empty() ? json() : evaluate_for_run(spec.evaluate, spec.variants, block.name, r.options, ts.info);
        for (const auto& tchoice : train_choices) {
          json tr = train;
          for (const auto& [axis, v] : tchoice) tr[axis->name] = v;
          derive_length(tr, counted, spec, label + (describe_choice(tchoice).empty() ? "" : " " + describe_choice(tchoice)), out.derivations);
          const double cost = run_cost(flops, TrainSettings::from_json(tr), spec, evaluate);
          for (std::int64_t seed : spec.sweep.seeds)
            for (const json& streams : stream_choices) {
              RunSpec run = make_run_spec(run_identity(ts, block.name, r.options, match, tr, seed, streams, spec, evaluate), ts.info, cost);
              run.index = static_cast<std::int64_t>(out.runs.size());
              out.runs.push_back(std::move(run));
              run_origin.push_back(block.where);
            }
        }
      }
    }
  }
  for (std::size_t mi = 0; mi < spec.models.size(); ++mi)
    if (model_ok[mi] == 0 && model_error[mi]) throw *model_error[mi];
  check_no_duplicate_runs(out.runs, run_origin);
  out.claims = spec.claims;
  check_claims(out.claims, out.runs, spec.measure.has_value());
  return out;
}

std::string setting_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    // As a reader writes it (4e+12, not 4000000000000.0), unless six digits lose the value.
    const double x = value.get<double>();
    std::string text = fmt::format("{:g}", x);
    if (std::strtod(text.c_str(), nullptr) == x) return text;
  }
  return value.dump();
}

std::string matched_size_label(const json& match) {
  return match.value("figure", std::string("params")) + "≈" +
         fmt::format("{:g}", match.contains("to") && match.at("to").is_number() ? match.at("to").get<double>() : 0.0);
}

namespace {
void flatten(const json& j, const std::string& prefix, std::map<std::string, json>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else {
    out[prefix] = j;
  }
}
std::map<std::string, json> setting_leaves(const json& spec) {
  std::map<std::string, json> leaves;
  flatten(spec.at("task").at("options"), "task", leaves);
  leaves["task.seq_len"] = spec.at("task").at("seq_len");
  flatten(spec.at("model").at("options"), "model", leaves);
  flatten(spec.at("train"), "train", leaves);
  // An option left out at its default (train_identity) still has a value.
  for (const auto& o : train_schema().options)
    if (const json* d = omitted_train_default(o.name)) leaves.emplace("train." + o.name, *d);
  // What a budget derives is not a setting of its own, the budget is: left out, so that the
  // models trained to one budget share a condition and are compared.
  const json& train = spec.at("train");
  const auto positive = [&train](const char* key) {
    const auto it = train.find(key);
    return it != train.end() && it->is_number() && it->get<double>() > 0;
  };
  if (positive("flops") || positive("seconds")) leaves.erase("train.steps");
  if (positive("warmup_share")) leaves.erase("train.warmup_steps");
  // A width chosen to match a count is that target, whatever width it took on each task.
  if (const auto match = spec.at("model").find("match"); match != spec.at("model").end())
    for (const auto& [option, m] : match->items()) leaves["model." + option] = matched_size_label(m);
  return leaves;
}
}  // namespace

std::map<std::string, json> setting_values(const json& spec) {
  std::map<std::string, json> values = setting_leaves(spec);
  for (const char* part : {"measure", "evaluate"})
    if (spec.contains(part)) flatten(spec.at(part), part, values);
  return values;
}

std::vector<std::string> varying_paths(const std::vector<json>& specs) {
  std::vector<const json*> pointers;
  pointers.reserve(specs.size());
  for (const auto& s : specs) pointers.push_back(&s);
  return varying_paths(pointers);
}

std::vector<std::string> varying_paths(const std::vector<const json*>& all_specs) {
  // The answer depends on which settings occur, not how often: the many seeds of one
  // setting (100,000 runs of a few dozen settings) are looked at once.
  std::vector<const json*> specs;
  {
    std::set<std::string> settings;
    for (const json* s : all_specs)
      if (settings.insert(s->at("task").dump() + '\n' + s->at("model").dump() + '\n' + s->at("train").dump()).second)
        specs.push_back(s);
  }
  std::vector<std::map<std::string, json>> leaves;
  // A model option varies when it takes several values among one model's runs: two
  // models that merely default it differently (Longformer's and BigBird's `block`) do not
  // make it a setting.
  std::map<std::string, std::map<std::string, std::set<std::string>>> seen;  // path -> group -> values
  for (const json* sp : specs) {
    const json& s = *sp;
    leaves.push_back(setting_leaves(s));
    const std::string model = s.at("model").at("name");
    for (const auto& [path, v] : leaves.back())
      seen[path][path.rfind("model.", 0) == 0 ? model : ""].insert(v.dump());
  }
  std::vector<std::string> candidates;
  for (const auto& [path, groups] : seen)
    for (const auto& [group, values] : groups)
      if (values.size() > 1) {
        candidates.push_back(path);
        break;
      }
  // Show the fewest paths that tell runs apart: seq_len first, then model, train and task
  // options; a path whose value follows from the paths already kept (a default derived
  // from seq_len, say) adds nothing and is left out.
  auto priority = [](const std::string& p) {
    if (p == "task.seq_len") return 0;
    if (p.rfind("model.", 0) == 0) return 1;
    if (p.rfind("train.", 0) == 0) return 2;
    return 3;
  };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](const std::string& a, const std::string& b) { return priority(a) < priority(b); });
  std::vector<std::string> kept;
  for (const auto& path : candidates) {
    std::map<std::string, std::string> determined;  // values of kept paths -> value of this path
    bool function = true;
    for (const auto& l : leaves) {
      std::string k;
      for (const auto& kp : kept) {
        auto it = l.find(kp);
        k += (it == l.end() ? "~" : it->second.dump()) + "\x1f";
      }
      auto it = l.find(path);
      const std::string v = it == l.end() ? "~" : it->second.dump();
      auto [pos, fresh] = determined.emplace(k, v);
      if (!fresh && pos->second != v) {
        function = false;
        break;
      }
    }
    if (!function) kept.push_back(path);
  }
  return kept;
}

const json* spec_value_at(const json& spec, const std::string& spec_path) {
  const json* j = &spec;
  for (std::size_t from = 0; j != nullptr && from <= spec_path.size();) {
    const std::size_t to = std::min(spec_path.find('.', from), spec_path.size());
    const auto it = j->is_object() ? j->find(spec_path.substr(from, to - from)) : j->end();
    j = (j->is_object() && it != j->end()) ? &*it : nullptr;
    from = to + 1;
  }
  // A [train] option left out of the spec at its default (train_identity) has that value.
  if (j == nullptr && spec_path.compare(0, 6, "train.") == 0 && spec_path.find('.', 6) == std::string::npos)
    return omitted_train_default(spec_path.substr(6));
  return j;
}

json value_at_path(const json& spec, const std::string& path) {
  // The path walked directly (a report asks this of every run): a task's or model's options
  // sit under "options", [train] and the task's seq_len as they are. Flattening the whole spec
  // below gives the same answer and covers option names that hold a dot themselves.
  const auto dot = path.find('.');
  const std::string root = path.substr(0, dot);
  const bool matched = root == "model" && spec.is_object() && spec_value_at(spec, "model.match." + path.substr(dot + 1));
  if (dot != std::string::npos && !matched && (root == "task" || root == "model" || root == "train") && spec.is_object()) {
    const bool as_stored = root == "train" || path == "task.seq_len";
    const json* j = spec_value_at(spec, as_stored ? path : root + ".options." + path.substr(dot + 1));
    if (j != nullptr && !j->is_object()) return *j;
  }
  auto leaves = setting_leaves(spec);
  auto it = leaves.find(path);
  return it == leaves.end() ? json() : it->second;
}

std::string describe_run(const RunSpec& run, const std::vector<std::string>& varying) {
  std::string s = run.task_name() + "/" + std::to_string(run.seq_len()) + " " + run.model_name();
  for (const auto& path : varying) {
    if (path == "task.seq_len") continue;
    const json v = value_at_path(run.spec, path);
    if (v.is_null()) continue;
    const auto dot = path.find('.');
    s += " " + path.substr(dot + 1) + "=" + setting_text(v);
  }
  return s + " " + seed_label(run.spec);
}

}  // namespace lrb
