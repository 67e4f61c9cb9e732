// Multi-label documents like MeSH indexing: each of num_labels topics has its own small
// vocabulary (topic_words words drawn from the whole vocabulary, Zipf-weighted, so topics
// share words); a document picks 1..max_labels topics with random mixture weights and
// draws each token from a background Zipf distribution over all words (probability
// `background`) or from one of its topics. Its labels are the topics it used: y is
// [n, num_labels] float 0/1 (TaskInfo::multilabel). Metrics: example-based F1 ("ebf")
// and micro-F1, predicting label k when sigmoid(logit_k) > 0.5.
//
// The topic vocabularies come from `topic_seed`, not from the run seed: every seed draws
// documents from the same topics. Documents are min_length..seq_len tokens, padded with 0.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>

#include "suite/registry/registry.h"
#include "suite/contracts/task.h"
#include "workloads/tasks/common.h"

namespace lrb {
namespace {

constexpr std::int64_t kPad = 0;

struct Params {
  std::int64_t seq_len, train_size, num_labels, vocab_size, topic_words, max_labels, min_length;
  double background;
  std::uint64_t topic_seed;
};

// Words with Zipf weights 1/(rank+1); draw() picks one by inverse CDF.
struct Distribution {
  std::vector<std::int64_t> words;
  std::vector<double> cdf;
  std::int64_t draw(Rng& rng) const {
    const double u = rng.uniform() * cdf.back();
    const auto i = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
    return words[static_cast<std::size_t>(std::min<std::ptrdiff_t>(i, static_cast<std::ptrdiff_t>(words.size()) - 1))];
  }
};

Distribution zipf(std::vector<std::int64_t> words) {
  Distribution d;
  d.words = std::move(words);
  double s = 0;
  for (std::size_t r = 0; r < d.words.size(); ++r) {
    s += 1.0 / static_cast<double>(r + 1);
    d.cdf.push_back(s);
  }
  return d;
}

class MultilabelDocs final : public PerSampleTask {
 public:
  explicit MultilabelDocs(Params p) : PerSampleTask(p.train_size), p_(p) {
    Rng rng(derive_seed(p.topic_seed, 0, "topics"));
    std::vector<std::int64_t> all(static_cast<std::size_t>(p.vocab_size - 1));
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i) + 1;
    for (std::int64_t k = 0; k < p.num_labels; ++k) {
      portable_shuffle(all, rng);
      topics_.push_back(zipf({all.begin(), all.begin() + p.topic_words}));
    }
    portable_shuffle(all, rng);
    background_ = zipf(all);
  }

 private:
  void document(Rng& rng, std::int64_t* x, float* y) const {
    std::vector<std::int64_t> order(static_cast<std::size_t>(p_.num_labels));
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<std::int64_t>(k);
    const std::int64_t m = rng.between(1, p_.max_labels);
    for (std::int64_t i = 0; i < m; ++i)  // partial Fisher–Yates: m distinct topics
      std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(rng.between(i, p_.num_labels - 1))]);
    std::vector<double> cum;
    double s = 0;
    for (std::int64_t i = 0; i < m; ++i) {
      s += 0.5 + rng.uniform();
      cum.push_back(s);
      y[order[static_cast<std::size_t>(i)]] = 1.0f;
    }
    const std::int64_t len = rng.between(p_.min_length, p_.seq_len);
    for (std::int64_t t = 0; t < len; ++t) {
      if (rng.uniform() < p_.background) {
        x[t] = background_.draw(rng);
      } else {
        const double u = rng.uniform() * s;
        const auto i = std::min<std::ptrdiff_t>(std::upper_bound(cum.begin(), cum.end(), u) - cum.begin(), m - 1);
        x[t] = topics_[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])].draw(rng);
      }
    }
    for (std::int64_t t = len; t < p_.seq_len; ++t) x[t] = kPad;
  }

  Split split(std::uint64_t seed, SplitStream stream, std::int64_t n) const override {
    auto x = at::empty({n, p_.seq_len}, at::kLong);
    auto y = at::zeros({n, p_.num_labels}, at::kFloat);
    auto* px = x.data_ptr<std::int64_t>();
    auto* py = y.data_ptr<float>();
    at::parallel_for(0, n, 16, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        Rng rng(sample_seed(seed, stream, static_cast<std::uint64_t>(i)));
        document(rng, px + i * p_.seq_len, py + i * p_.num_labels);
      }
    });
    return {x, y};
  }

  Params p_;
  std::vector<Distribution> topics_;
  Distribution background_;
};

TaskEntry multilabel_docs_entry() {
  TaskEntry e;
  e.name = "multilabel-docs";
  e.summary = "multi-label documents like MeSH: token documents from mixtures of topic vocabularies; labels = topics";
  e.schema.options = {
      {"train_size", OptionType::Int, json(2000), "training documents", {}, 1, {}},
      {"num_labels", OptionType::Int, json(32), "topics = labels", {}, 2, 4096},
      {"vocab_size", OptionType::Int, json(4096), "token vocabulary including the pad token 0", {}, 16, 1 << 22},
      {"topic_words", OptionType::Int, json(48), "words in each topic's vocabulary", {}, 1, {}},
      {"max_labels", OptionType::Int, json(5), "most topics (labels) per document; each has 1..max_labels", {}, 1, {}},
      {"background", OptionType::Float, json(0.6), "share of tokens drawn from the background distribution", {}, 0.0, 0.95},
      {"min_length", OptionType::Int, json(), "shortest document in tokens (default seq_len / 2)", {}, 1, {}, true},
      {"topic_seed", OptionType::Int, json(0), "which topic vocabularies; the same for every run seed", {}, 0, kInt64Max},
      metrics_option({"ebf", "micro_f1"}),
  };
  e.schema.resolve = [](json& o, const json& ctx) {
    const auto seq_len = ctx.at("seq_len").get<std::int64_t>();
    if (seq_len < 2) throw OptionError("seq_len", "multilabel-docs needs seq_len >= 2");
    if (o["min_length"].is_null()) o["min_length"] = std::max<std::int64_t>(1, seq_len / 2);
    if (o["min_length"].get<std::int64_t>() > seq_len)
      throw OptionError("min_length", "min_length must not exceed seq_len " + std::to_string(seq_len));
    if (o["topic_words"].get<std::int64_t>() > o["vocab_size"].get<std::int64_t>() - 1)
      throw OptionError("topic_words", "topic_words must be below vocab_size");
    if (o["max_labels"].get<std::int64_t>() > o["num_labels"].get<std::int64_t>())
      throw OptionError("max_labels", "max_labels must not exceed num_labels");
    resolve_metrics(o, true, o["num_labels"].get<std::int64_t>());
  };
  e.describe = [](const json& o, std::int64_t seq_len) {
    TaskInfo t;
    t.modality = Modality::Tokens;
    t.input_shape = {seq_len};
    t.num_classes = o.at("num_labels").get<std::int64_t>();
    t.multilabel = true;
    t.vocab_size = o.at("vocab_size").get<std::int64_t>();
    t.pad_token = kPad;
    t.metrics = metrics_of(o);
    return t;
  };
  e.make = [](const json& o, std::int64_t seq_len) -> std::unique_ptr<Task> {
    return std::make_unique<MultilabelDocs>(Params{
        seq_len, o.at("train_size").get<std::int64_t>(), o.at("num_labels").get<std::int64_t>(),
        o.at("vocab_size").get<std::int64_t>(), o.at("topic_words").get<std::int64_t>(),
        o.at("max_labels").get<std::int64_t>(), o.at("min_length").get<std::int64_t>(), o.at("background").get<double>(),
        o.at("topic_seed").get<std::uint64_t>()});
  };
  return e;
}

LRB_REGISTER_TASK(multilabel_docs_entry());

}  // namespace
}  // namespace lrb
