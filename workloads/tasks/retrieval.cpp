// Long-range retrieval (associative recall): a sequence of (key, value) token pairs, then a
// query marker and a query key; the class is the value paired with that key. The query key
// occurs exactly once among the pairs (other keys may repeat), and its pair lies between
// min_distance and max_distance tokens before the query, so with the default
// min_distance = seq_len / 2 the answer is always in the far half of the sequence.
// Values are dealt as a near-even multiset so counting tokens gives nothing away.
//
// Layout (seq_len L, P = (L - 2) / 2 pairs): k v k v ... k v  QUERY q  [PAD if L is odd].
// Tokens: 0 pad, 1 query marker, 2 .. 2+num_keys-1 keys, then num_values values.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>

#include "suite/registry/registry.h"
#include "suite/contracts/task.h"
#include "workloads/tasks/common.h"

namespace lrb {
namespace {

constexpr std::int64_t kPad = 0, kQuery = 1, kFirstKey = 2;

struct Params {
  std::int64_t seq_len, train_size, num_keys, num_values, min_distance, max_distance;
};

std::int64_t pairs_of(std::int64_t seq_len) { return (seq_len - 2) / 2; }

// Distance from pair j's value token (position 2j+1) to the query key (position 2P+1).
std::int64_t distance_of(std::int64_t j, std::int64_t pairs) { return 2 * (pairs - j); }

std::int64_t sample(const Params& p, Rng& rng, std::int64_t* out) {
  const std::int64_t pairs = pairs_of(p.seq_len);
  const std::int64_t first_value = kFirstKey + p.num_keys;
  // Values: each appears pairs / V times or once more, shuffled.
  std::vector<std::int64_t> values(static_cast<std::size_t>(pairs));
  for (std::int64_t j = 0; j < pairs; ++j) values[static_cast<std::size_t>(j)] = j % p.num_values;
  portable_shuffle(values, rng);
  // The answer pair: its distance to the query within [min_distance, max_distance].
  const std::int64_t j_lo = std::max<std::int64_t>(0, pairs - p.max_distance / 2);
  const std::int64_t j_hi = std::min<std::int64_t>(pairs - 1, pairs - (p.min_distance + 1) / 2);
  const std::int64_t answer = rng.between(j_lo, j_hi);
  const std::int64_t query_key = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(p.num_keys)));
  for (std::int64_t j = 0; j < pairs; ++j) {
    std::int64_t k = query_key;
    if (j != answer) {  // any other key: the query key occurs once
      k = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(p.num_keys - 1)));
      if (k >= query_key) ++k;
    }
    out[2 * j] = kFirstKey + k;
    out[2 * j + 1] = first_value + values[static_cast<std::size_t>(j)];
  }
  out[2 * pairs] = kQuery;
  out[2 * pairs + 1] = kFirstKey + query_key;
  for (std::int64_t t = 2 * pairs + 2; t < p.seq_len; ++t) out[t] = kPad;
  return values[static_cast<std::size_t>(answer)];
}

class Retrieval final : public PerSampleTask {
 public:
  explicit Retrieval(Params p) : PerSampleTask(p.train_size), p_(p) {}

 private:
  Split split(std::uint64_t seed, SplitStream stream, std::int64_t n) const override {
    auto x = at::empty({n, p_.seq_len}, at::kLong);
    auto y = at::empty({n}, at::kLong);
    auto* px = x.data_ptr<std::int64_t>();
    auto* py = y.data_ptr<std::int64_t>();
    at::parallel_for(0, n, 16, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        Rng rng(sample_seed(seed, stream, static_cast<std::uint64_t>(i)));
        py[i] = sample(p_, rng, px + i * p_.seq_len);
      }
    });
    return {x, y};
  }

  Params p_;
};

TaskEntry retrieval_entry() {
  TaskEntry e;
  e.name = "retrieval";
  e.summary = "associative recall: (key, value) pairs then a query key; the class is its value";
  e.schema.options = {
      {"train_size", OptionType::Int, json(2000), "training sequences", {}, 1, {}},
      {"num_keys", OptionType::Int, json(64), "key vocabulary", {}, 2, 1 << 20},
      {"num_values", OptionType::Int, json(10), "value vocabulary = number of classes", {}, 2, 1 << 16},
      {"min_distance", OptionType::Int, json(), "fewest tokens between the answer's value and the query key (default seq_len / 2)", {}, 2, {}, true},
      {"max_distance", OptionType::Int, json(), "most tokens between them (default: the whole sequence)", {}, 2, {}, true},
      metrics_option({"accuracy", "macro_f1"}),
  };
  e.schema.resolve = [](json& o, const json& ctx) {
    const auto seq_len = ctx.at("seq_len").get<std::int64_t>();
    if (seq_len < 6) throw OptionError("seq_len", "retrieval needs seq_len >= 6 (two pairs and the query)");
    const std::int64_t far = distance_of(0, pairs_of(seq_len));
    if (o["max_distance"].is_null()) o["max_distance"] = far;
    if (o["min_distance"].is_null()) o["min_distance"] = std::min(far, std::max<std::int64_t>(2, seq_len / 2));
    const auto lo = o["min_distance"].get<std::int64_t>(), hi = o["max_distance"].get<std::int64_t>();
    if (hi > far)
      throw OptionError("max_distance", "max_distance " + std::to_string(hi) + " is beyond the first pair (" +
                                            std::to_string(far) + " tokens before the query at seq_len " +
                                            std::to_string(seq_len) + ")");
    if (lo > hi) throw OptionError("min_distance", "min_distance must not exceed max_distance");
    // Distances are even (2, 4, ...): the window must hold one.
    if ((lo + 1) / 2 > hi / 2) throw OptionError("min_distance", "no pair lies between min_distance and max_distance (distances are even)");
    resolve_metrics(o, false, o["num_values"].get<std::int64_t>());
  };
  e.describe = [](const json& o, std::int64_t seq_len) {
    TaskInfo t;
    t.modality = Modality::Tokens;
    t.input_shape = {seq_len};
    t.num_classes = o.at("num_values").get<std::int64_t>();
    t.vocab_size = kFirstKey + o.at("num_keys").get<std::int64_t>() + t.num_classes;
    t.pad_token = kPad;
    t.metrics = metrics_of(o);
    return t;
  };
  e.make = [](const json& o, std::int64_t seq_len) -> std::unique_ptr<Task> {
    return std::make_unique<Retrieval>(Params{seq_len, o.at("train_size").get<std::int64_t>(),
                                              o.at("num_keys").get<std::int64_t>(), o.at("num_values").get<std::int64_t>(),
                                              o.at("min_distance").get<std::int64_t>(),
                                              o.at("max_distance").get<std::int64_t>()});
  };
  return e;
}

LRB_REGISTER_TASK(retrieval_entry());

}  // namespace
}  // namespace lrb
