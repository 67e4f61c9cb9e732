// Time-series classification from the user's UCR/UEA files (sktime .ts or UCR .tsv), the
// way to run the real MosquitoSound (or any archive problem). Evaluation comes from a
// second file (eval_path: the archive's _TEST file), or is held out of the training file
// (eval_fraction, chosen by split_seed so every run seed evaluates on the same cases).
// Files are read and checked when the sweep is expanded, so a missing file, unequal
// lengths, a non-numeric value or an undeclared label stops the sweep before any training.
#include <ATen/ATen.h>

#include <cmath>
#include <numeric>

#include "suite/registry/registry.h"
#include "suite/contracts/task.h"
#include "workloads/loaders/ucr.h"
#include "workloads/tasks/common.h"

namespace lrb {
namespace {

struct Params {
  std::string path, eval_path;
  double eval_fraction;
  std::uint64_t split_seed;
  std::int64_t train_size;
  bool zscore;
};

Params params_of(const json& o) {
  return {o.at("path").get<std::string>(),        o.at("eval_path").get<std::string>(),
          o.at("eval_fraction").get<double>(),    o.at("split_seed").get<std::uint64_t>(),
          o.at("train_size").get<std::int64_t>(), o.at("normalize").get<std::string>() == "zscore"};
}

// Everything describe() and generate() need, checked.
struct Loaded {
  std::shared_ptr<const SeriesSet> train, eval;  // eval null: split
  std::vector<std::string> classes;
  std::vector<std::int64_t> train_y, eval_y;
};

Loaded load(const Params& p) {
  Loaded l;
  l.train = read_series_file_cached(p.path);
  l.classes = l.train->class_names.empty() ? sorted_classes(l.train->labels) : l.train->class_names;
  if (l.classes.size() < 2)
    throw UserError(p.path + ": every case has the label '" + l.classes[0] + "'; classification needs two classes or more");
  l.train_y = label_ids(*l.train, l.classes);
  if (!p.eval_path.empty()) {
    l.eval = read_series_file_cached(p.eval_path);
    const auto& a = l.train->x;
    const auto& b = l.eval->x;
    if (a.size(1) != b.size(1) || a.size(2) != b.size(2))
      throw UserError(p.eval_path + ": series are " + std::to_string(b.size(1)) + " long with " +
                      std::to_string(b.size(2)) + " dimensions, but those of " + p.path + " are " +
                      std::to_string(a.size(1)) + " long with " + std::to_string(a.size(2)));
    l.eval_y = label_ids(*l.eval, l.classes);
  }
  return l;
}

at::Tensor normalise(at::Tensor x, bool zscore) {
  if (!zscore) return x;
  // Per series and dimension, over time (the UCR convention).
  const auto mean = x.mean(1, true);
  const auto sd = x.std(1, false, true).clamp_min(1e-8);
  return ((x - mean) / sd).contiguous();
}

class TimeseriesFile final : public Task {
 public:
  explicit TimeseriesFile(Params p) : p_(std::move(p)) {}

  TaskData generate(const DataRequest& req) const override {
    const Loaded l = load(p_);
    const auto n = static_cast<std::int64_t>(l.train_y.size());
    std::vector<std::int64_t> pool(static_cast<std::size_t>(n)), eval_index;
    std::iota(pool.begin(), pool.end(), 0);
    if (!l.eval) {
      Rng split_rng(derive_seed(p_.split_seed, 0, "holdout"));
      portable_shuffle(pool, split_rng);
      const auto held = static_cast<std::size_t>(std::llround(p_.eval_fraction * n));
      eval_index.assign(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(held));
      pool.erase(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(held));
    } else {
      eval_index.resize(l.eval_y.size());
      std::iota(eval_index.begin(), eval_index.end(), 0);
    }
    if (req.eval_size > static_cast<std::int64_t>(eval_index.size()))
      throw UserError("timeseries-file: eval_size " + std::to_string(req.eval_size) + " is more than the " +
                      std::to_string(eval_index.size()) + " evaluation cases available; lower [train] eval_size" +
                      (l.eval ? "" : " or raise eval_fraction"));
    eval_index.resize(static_cast<std::size_t>(req.eval_size));
    const std::int64_t n_train = p_.train_size > 0 ? p_.train_size : static_cast<std::int64_t>(pool.size());
    if (n_train > static_cast<std::int64_t>(pool.size()))
      throw UserError("timeseries-file: train_size " + std::to_string(n_train) + " is more than the " +
                      std::to_string(pool.size()) + " training cases of " + p_.path);
    Rng order(req.seed);  // the run seed picks the training subset and its order
    portable_shuffle(pool, order);
    pool.resize(static_cast<std::size_t>(n_train));

    const at::Tensor ty = at::tensor(l.train_y, at::kLong);
    const at::Tensor& ex = l.eval ? l.eval->x : l.train->x;
    const at::Tensor ey = l.eval ? at::tensor(l.eval_y, at::kLong) : ty;
    TaskData d;
    d.train = {normalise(take_rows(l.train->x, pool), p_.zscore), take_rows(ty, pool)};
    d.eval = {normalise(take_rows(ex, eval_index), p_.zscore), take_rows(ey, eval_index)};
    return d;
  }

 private:
  Params p_;
};

TaskEntry timeseries_file_entry() {
  TaskEntry e;
  e.name = "timeseries-file";
  e.summary = "time-series classification from UCR/UEA files (.ts or .tsv) the user points to";
  e.uses_seq_len = false;
  e.schema.options = {
      {"path", OptionType::String, json(), "training file: sktime .ts or UCR .tsv (required)"},
      {"eval_path", OptionType::String, json(""), "evaluation file (e.g. the _TEST file); empty: hold out eval_fraction"},
      {"eval_fraction", OptionType::Float, json(0.1), "share of the training file held out when eval_path is empty", {}, 0.0, 0.9},
      {"split_seed", OptionType::Int, json(0), "which cases are held out; the same for every run seed", {}, 0, kInt64Max},
      {"train_size", OptionType::Int, json(0), "training cases used (0: all); the run seed picks which", {}, 0, {}},
      {"normalize", OptionType::String, json("none"), "\"zscore\": each series and dimension to mean 0, sd 1", {"none", "zscore"}},
      metrics_option({"accuracy", "macro_f1"}),
  };
  e.schema.resolve = [](json& o, const json&) {
    if (o.at("path").is_string() && o.at("path").get<std::string>().empty())
      throw OptionError("path", "'path' is empty; give the path of a .ts or .tsv file");
    resolve_metrics(o, false, 0);
  };
  e.describe = [](const json& o, std::int64_t) {
    const Params p = params_of(o);
    const Loaded l = load(p);
    const auto n = l.train->x.size(0);
    const auto pool = l.eval ? n : n - static_cast<std::int64_t>(std::llround(p.eval_fraction * n));
    if (p.train_size > pool)
      throw UserError("timeseries-file: train_size " + std::to_string(p.train_size) + " is more than the " +
                      std::to_string(pool) + " training cases of " + p.path);
    TaskInfo t;
    t.modality = Modality::Signal;
    t.input_shape = {l.train->x.size(1), l.train->x.size(2)};
    t.num_classes = static_cast<std::int64_t>(l.classes.size());
    t.metrics = metrics_of(o);
    json check = o;
    resolve_metrics(check, false, t.num_classes);
    return t;
  };
  e.make = [](const json& o, std::int64_t) -> std::unique_ptr<Task> {
    return std::make_unique<TimeseriesFile>(params_of(o));
  };
  e.input_files = [](const json& o) {
    std::vector<std::string> files{o.at("path").get<std::string>()};
    if (!o.at("eval_path").get<std::string>().empty()) files.push_back(o.at("eval_path").get<std::string>());
    return files;
  };
  return e;
}

LRB_REGISTER_TASK(timeseries_file_entry());

}  // namespace
}  // namespace lrb
