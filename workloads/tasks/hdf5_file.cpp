// Classification from the user's own HDF5 file (workloads/loaders/hdf5_data.h): tokens,
// a signal or an image grid in /x, class ids or multi-label targets in /y. Evaluation is
// the records the file's /split marks 1 (in file order), or, without /split, a share of
// the records held out (eval_fraction, chosen by split_seed so every run seed evaluates on
// the same records). The file is read and checked when the sweep is expanded, so a bad
// file stops the sweep before any training.
#include <ATen/ATen.h>

#include <cmath>
#include <numeric>

#include "suite/registry/registry.h"
#include "suite/contracts/task.h"
#include "workloads/loaders/hdf5_data.h"
#include "workloads/tasks/common.h"

namespace lrb {
namespace {

struct Params {
  std::string path;
  double eval_fraction;
  std::uint64_t split_seed;
  std::int64_t train_size;
};

Params params_of(const json& o) {
  return {o.at("path").get<std::string>(), o.at("eval_fraction").get<double>(), o.at("split_seed").get<std::uint64_t>(),
          o.at("train_size").get<std::int64_t>()};
}

// Training and evaluation records, in the order they are used before the run seed
// shuffles the training ones.
struct Parts {
  std::vector<std::int64_t> train, eval;
};

Parts parts_of(const Hdf5Data& d, const Params& p) {
  Parts parts;
  if (!d.split.empty()) {
    for (std::int64_t r = 0; r < d.size(); ++r) {
      const auto s = d.split[static_cast<std::size_t>(r)];
      if (s == 0) parts.train.push_back(r);
      if (s == 1) parts.eval.push_back(r);
    }
    return parts;
  }
  std::vector<std::int64_t> pool(static_cast<std::size_t>(d.size()));
  std::iota(pool.begin(), pool.end(), 0);
  Rng split_rng(derive_seed(p.split_seed, 0, "holdout"));
  portable_shuffle(pool, split_rng);
  const auto held = static_cast<std::ptrdiff_t>(std::llround(p.eval_fraction * static_cast<double>(d.size())));
  parts.eval.assign(pool.begin(), pool.begin() + held);
  parts.train.assign(pool.begin() + held, pool.end());
  return parts;
}

void check_train_size(const Parts& parts, const Params& p, const Hdf5Data& d) {
  if (parts.train.empty())
    throw UserError(p.path + ": no training records are left; lower eval_fraction");
  if (p.train_size > static_cast<std::int64_t>(parts.train.size()))
    throw UserError("hdf5-file: train_size " + std::to_string(p.train_size) + " is more than the " +
                    std::to_string(parts.train.size()) + " training records of " + d.path +
                    (d.split.empty() ? "" : " (/split = 0)") + "; lower train_size, or 0 for all");
}

std::vector<std::string> metric_names(const json& o, const Hdf5Data& d) {
  if (o.at("metrics").get<std::string>() == "auto")
    return d.multilabel ? std::vector<std::string>{"ebf", "micro_f1"} : std::vector<std::string>{"accuracy", "macro_f1"};
  json check = o;
  resolve_metrics(check, d.multilabel, d.num_classes);  // the label kind is known only now
  return metrics_of(check);
}

class Hdf5File final : public Task {
 public:
  explicit Hdf5File(Params p) : p_(std::move(p)) {}

  TaskData generate(const DataRequest& req) const override {
    const auto d = read_hdf5_data_cached(p_.path);
    Parts parts = parts_of(*d, p_);
    check_train_size(parts, p_, *d);
    if (req.eval_size > static_cast<std::int64_t>(parts.eval.size()))
      throw UserError("hdf5-file: eval_size " + std::to_string(req.eval_size) + " is more than the " +
                      std::to_string(parts.eval.size()) + " evaluation records of " + p_.path +
                      "; lower [train] eval_size" +
                      (d->split.empty() ? " or raise eval_fraction" : " or mark more records 1 in /split"));
    parts.eval.resize(static_cast<std::size_t>(req.eval_size));
    Rng order(req.seed);  // the run seed picks the training subset and its order
    portable_shuffle(parts.train, order);
    if (p_.train_size > 0) parts.train.resize(static_cast<std::size_t>(p_.train_size));
    TaskData out;
    out.train = {take_rows(d->x, parts.train), take_rows(d->y, parts.train)};
    out.eval = {take_rows(d->x, parts.eval), take_rows(d->y, parts.eval)};
    return out;
  }

 private:
  Params p_;
};

TaskEntry hdf5_file_entry() {
  TaskEntry e;
  e.name = "hdf5-file";
  e.summary = "classification from an HDF5 file the user points to: /x tokens, signal or grid, /y labels, optional /split";
  e.uses_seq_len = false;
  e.schema.options = {
      {"path", OptionType::String, json(), "the HDF5 file: /x, /y, optional /split (required; format: workloads/README.md)"},
      {"eval_fraction", OptionType::Float, json(0.1), "share of the records held out for evaluation when the file has no /split", {}, 0.0, 0.9},
      {"split_seed", OptionType::Int, json(0), "which records are held out (no /split); the same for every run seed", {}, 0, kInt64Max},
      {"train_size", OptionType::Int, json(0), "training records used (0: all); the run seed picks which", {}, 0, {}},
      {"metrics", OptionType::String, json("auto"),
       "comma-separated metric names, the first is the primary; \"auto\": accuracy,macro_f1 for class ids, ebf,micro_f1 for multi-label targets",
       {}, {}, {}, false, false},
  };
  e.schema.resolve = [](json& o, const json&) {
    if (o.at("path").is_string() && o.at("path").get<std::string>().empty())
      throw OptionError("path", "'path' is empty; give the path of an HDF5 file");
  };
  e.describe = [](const json& o, std::int64_t) {
    const Params p = params_of(o);
    const auto d = read_hdf5_data_cached(p.path);
    check_train_size(parts_of(*d, p), p, *d);
    TaskInfo t;
    t.modality = d->modality;
    t.input_shape.assign(d->x.sizes().begin() + 1, d->x.sizes().end());
    t.num_classes = d->num_classes;
    t.multilabel = d->multilabel;
    t.vocab_size = d->vocab_size;
    t.pad_token = d->pad_token;
    t.metrics = metric_names(o, *d);
    return t;
  };
  e.make = [](const json& o, std::int64_t) -> std::unique_ptr<Task> { return std::make_unique<Hdf5File>(params_of(o)); };
  e.input_files = [](const json& o) { return std::vector<std::string>{o.at("path").get<std::string>()}; };
  return e;
}

LRB_REGISTER_TASK(hdf5_file_entry());

}  // namespace
}  // namespace lrb
