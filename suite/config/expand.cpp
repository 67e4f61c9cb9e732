#include "suite/config/expand.h"
#include "suite/config/setting_values.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

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
    if (axis->values.size() > 1) parts.push_back(axis->name + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
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
  return times(times(times(tasks, models), combinations(spec.train)), static_cast<std::int64_t>(spec.sweep.seeds.size()));
}

namespace {

// Counted before anything is built: a few large axes must not take the machine's memory.
void check_run_count(const SweepSpec& spec) {
  if (const std::int64_t n = count_runs_upper_bound(spec); n > spec.sweep.max_runs)
    throw UserError(SourceLocation{spec.file, 0, 0},
                    "the sweep expands to " +
                        (n == std::numeric_limits<std::int64_t>::max() ? std::string("more than 9e18")
                                                                      : std::to_string(n)) +
                        " runs (task settings x model settings x [train] settings x seeds), more than its limit of " +
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
  const auto steps = static_cast<double>(settings.steps);
  const auto batch = static_cast<double>(settings.batch_size);
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
json run_identity(const TaskState& ts, const std::string& model, const json& model_options, const json& train, std::int64_t seed,
                  const SweepSpec& spec, const json& evaluate) {
  json s = {{"version", kRunSpecVersion},
            {"task", {{"name", ts.name}, {"seq_len", ts.seq_len}, {"options", ts.options}}},
            {"model", {{"name", model}, {"options", model_options}}},
            {"train", train_identity(train)},
            {"seed_index", seed},
            {"base_seed", spec.sweep.base_seed},
            {"device", spec.sweep.device}};
  // Only measurement runs carry the key, so training runs keep their identity.
  if (spec.measure) s["measure"] = spec.measure->to_json();
  if (!evaluate.is_null()) s["evaluate"] = evaluate;
  // The group size changes the arithmetic (how the gradient is summed), so it is part of
  // the run; absent at 1, so single-rank runs keep their keys.
  if (spec.sweep.ranks_per_run > 1) s["ranks_per_run"] = spec.sweep.ranks_per_run;
  return s;
}

// Two blocks that resolve to the same experiment would run it once but count it twice.
void check_no_duplicate_runs(const std::vector<RunSpec>& runs, const std::vector<SourceLocation>& run_origin) {
  std::map<std::string, std::size_t> keys;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunSpec& r = runs[i];
    auto [it, fresh] = keys.emplace(r.key, i);
    if (!fresh)
      throw UserError(run_origin[i], "this table describes the same run as an earlier one (" + r.model_name() + " on " +
                                         r.task_name() + " seq_len " + std::to_string(r.seq_len()) + ", seed " +
                                         std::to_string(r.seed_index()) + "); remove the duplicate");
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
  const auto train_choices = cartesian(spec.train);
  const std::vector<TaskState> task_states = expand_tasks(spec, out.skipped);

  std::vector<SourceLocation> run_origin;  // the [[model]] table each run came from
  std::vector<std::size_t> model_ok(spec.models.size(), 0);
  std::vector<std::optional<UserError>> model_error(spec.models.size());
  for (const auto& ts : task_states) {
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
        // A model whose FLOPs are not counted (NaN) is costed by its tokens, like one without a count.
        const double counted = entry.flops ? entry.flops(r.options, ts.info) : std::nan("");
        const double flops = std::isfinite(counted) ? counted : static_cast<double>(ts.info.tokens());
        // Evaluation variants of this model: part of the runs' identity (variant_spec.h).
        const json evaluate = spec.variants.empty() ? json() : evaluate_for_run(spec.evaluate, spec.variants, block.name, r.options, ts.info);
        for (const auto& tchoice : train_choices) {
          json tr = train;
          for (const auto& [axis, v] : tchoice) tr[axis->name] = v;
          const double cost = run_cost(flops, TrainSettings::from_json(tr), spec, evaluate);
          for (std::int64_t seed : spec.sweep.seeds) {
            RunSpec run = make_run_spec(run_identity(ts, block.name, r.options, tr, seed, spec, evaluate), ts.info, cost);
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
  if (dot != std::string::npos && (root == "task" || root == "model" || root == "train") && spec.is_object()) {
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
    s += " " + path.substr(dot + 1) + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return s + " seed " + std::to_string(run.seed_index());
}

}  // namespace lrb
