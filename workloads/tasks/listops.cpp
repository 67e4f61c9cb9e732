// ListOps (Long Range Arena): nested MIN/MAX/MED/SM expressions over digits; the label is
// the expression's value. LRA's generator rules (arXiv 2011.04006 and its code): operators
// MIN, MAX, MED (median rounded down), SM (sum mod 10) over digits 0-9, `]` closes; trees
// from depth 1 to a maximum depth of 10; a node below the
// maximum depth is an operator with probability operator_prob (2..max_args arguments),
// else a digit; samples are kept when their token length lies strictly between the
// bounds, and deduplicated across both splits. The bounds follow seq_len by default
// (LRA: 500 < length < 2000 for seq_len 2000, so min_length = seq_len / 4).
#include <ATen/ATen.h>

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "suite/core/seeds.h"
#include "suite/registry/registry.h"
#include "suite/contracts/task.h"
#include "workloads/tasks/common.h"

namespace lrb {
namespace {

// Token ids. Digits d -> 1 + d; operators open a bracket: "[MIN" is one token.
constexpr std::int64_t kPad = 0, kDigit0 = 1, kOpMin = 11, kOpMax = 12, kOpMed = 13, kOpSum = 14, kClose = 15;
constexpr std::int64_t kVocab = 16;

struct Params {
  std::int64_t seq_len, train_size, min_length, max_length, max_depth, max_args;
  double operator_prob;
};

Params params_of(const json& o, std::int64_t seq_len) {
  return {seq_len,
          o.at("train_size").get<std::int64_t>(),
          o.at("min_length").get<std::int64_t>(),
          o.at("max_length").get<std::int64_t>(),
          o.at("max_depth").get<std::int64_t>(),
          o.at("max_args").get<std::int64_t>(),
          o.at("operator_prob").get<double>()};
}

class Generator {
 public:
  Generator(const Params& p, Rng& rng) : p_(p), rng_(rng) {}

  // Generates one expression; false when it ran past max_length (rejected early).
  bool sample(std::vector<std::int64_t>& tokens, int& value) {
    tokens.clear();
    overflow_ = false;
    value = node(1, tokens);
    return !overflow_;
  }

 private:
  int node(std::int64_t depth, std::vector<std::int64_t>& tokens) {
    if (overflow_) return 0;
    const double r = depth < p_.max_depth ? rng_.uniform() : 1.0;
    if (r >= p_.operator_prob) {
      const int v = static_cast<int>(rng_.below(10));
      push(tokens, kDigit0 + v);
      return v;
    }
    const auto nargs = rng_.between(2, p_.max_args);
    const auto op = kOpMin + static_cast<std::int64_t>(rng_.below(4));
    push(tokens, op);
    std::vector<int> args;
    for (std::int64_t i = 0; i < nargs && !overflow_; ++i) args.push_back(node(depth + 1, tokens));
    push(tokens, kClose);
    if (overflow_) return 0;
    return apply(op, args);
  }

  void push(std::vector<std::int64_t>& tokens, std::int64_t t) {
    if (static_cast<std::int64_t>(tokens.size()) + 1 >= p_.max_length) overflow_ = true;
    else tokens.push_back(t);
  }

  static int apply(std::int64_t op, std::vector<int> args) {
    switch (op) {
      case kOpMin: return *std::min_element(args.begin(), args.end());
      case kOpMax: return *std::max_element(args.begin(), args.end());
      case kOpMed: {
        std::sort(args.begin(), args.end());
        const std::size_t n = args.size();
        // LRA: int(np.median(values)): the mean of the middle two, rounded down.
        return n % 2 ? args[n / 2] : (args[n / 2 - 1] + args[n / 2]) / 2;
      }
      default: {
        int s = 0;
        for (int a : args) s += a;
        return s % 10;
      }
    }
  }

  const Params& p_;
  Rng& rng_;
  bool overflow_ = false;
};

class ListOps final : public Task {
 public:
  explicit ListOps(Params p) : p_(p) {}

  TaskData generate(const DataRequest& req) const override {
    Rng rng(req.seed);
    Generator gen(p_, rng);
    std::unordered_set<std::string> seen;
    const std::int64_t total = p_.train_size + req.eval_size;
    auto x = at::zeros({total, p_.seq_len}, at::kLong);
    auto y = at::zeros({total}, at::kLong);
    auto* xp = x.data_ptr<std::int64_t>();
    auto* yp = y.data_ptr<std::int64_t>();
    std::vector<std::int64_t> tokens;
    int value = 0;
    std::int64_t made = 0, attempts = 0;
    const std::int64_t max_attempts = 2000 * total + 100000;
    while (made < total) {
      if (++attempts > max_attempts)
        throw std::runtime_error("listops: could not generate " + std::to_string(total) +
                                 " distinct expressions with length in (" + std::to_string(p_.min_length) + ", " +
                                 std::to_string(p_.max_length) + "); widen min_length/max_length or lower train_size");
      if (!gen.sample(tokens, value)) continue;
      const auto len = static_cast<std::int64_t>(tokens.size());
      if (len <= p_.min_length || len >= p_.max_length) continue;
      std::string bytes(reinterpret_cast<const char*>(tokens.data()), tokens.size() * sizeof(std::int64_t));
      if (!seen.insert(std::move(bytes)).second) continue;
      std::copy(tokens.begin(), tokens.end(), xp + made * p_.seq_len);
      yp[made] = value;
      ++made;
    }
    TaskData d;
    d.train = {x.narrow(0, 0, p_.train_size), y.narrow(0, 0, p_.train_size)};
    d.eval = {x.narrow(0, p_.train_size, req.eval_size), y.narrow(0, p_.train_size, req.eval_size)};
    return d;
  }

 private:
  Params p_;
};

TaskEntry listops_entry() {
  TaskEntry e;
  e.name = "listops";
  e.summary = "LRA ListOps: nested MIN/MAX/MED/SM expressions, 10 classes";
  e.schema.options = {
      {"train_size", OptionType::Int, json(2000), "training samples", {}, 1, {}},
      {"min_length", OptionType::Int, json(), "keep expressions longer than this (default seq_len/4)", {}, 0, {}, true},
      {"max_length", OptionType::Int, json(), "keep expressions shorter than this (default seq_len; at most seq_len)", {}, 2, {}, true},
      {"max_depth", OptionType::Int, json(10), "maximum nesting depth", {}, 1, 64},
      {"max_args", OptionType::Int, json(10), "maximum arguments of an operator", {}, 2, 64},
      {"operator_prob", OptionType::Float, json(0.25), "probability that a node below max_depth is an operator", {}, 0.0, 0.9},
      metrics_option({"accuracy", "macro_f1"}),
  };
  e.schema.resolve = [](json& o, const json& ctx) {
    const auto seq_len = ctx.at("seq_len").get<std::int64_t>();
    if (o["max_length"].is_null()) o["max_length"] = seq_len;
    if (o["min_length"].is_null()) o["min_length"] = seq_len / 4;
    if (o["max_length"].get<std::int64_t>() > seq_len)
      throw OptionError("max_length", "max_length " + o["max_length"].dump() + " is longer than seq_len " +
                                          std::to_string(seq_len));
    if (o["min_length"].get<std::int64_t>() + 2 >= o["max_length"].get<std::int64_t>())
      throw OptionError("min_length", "min_length must be at least 3 below max_length");
    if (seq_len < 8) throw OptionError("seq_len", "ListOps needs seq_len >= 8");
    resolve_metrics(o, false, 10);
  };
  e.describe = [](const json& o, std::int64_t seq_len) {
    TaskInfo t;
    t.modality = Modality::Tokens;
    t.input_shape = {seq_len};
    t.num_classes = 10;
    t.vocab_size = kVocab;
    t.pad_token = kPad;
    t.metrics = metrics_of(o);
    return t;
  };
  e.make = [](const json& o, std::int64_t seq_len) -> std::unique_ptr<Task> {
    return std::make_unique<ListOps>(params_of(o, seq_len));
  };
  return e;
}

LRB_REGISTER_TASK(listops_entry());

}  // namespace
}  // namespace lrb
