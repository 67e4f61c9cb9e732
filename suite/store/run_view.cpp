#include "suite/store/run_view.h"

#include "suite/config/run_streams.h"

namespace lrb {

namespace {

const nlohmann::json* member(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string string_at(const nlohmann::json* parent, const char* key) {
  const nlohmann::json* v = parent ? member(*parent, key) : nullptr;
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

std::optional<std::int64_t> integer_at(const nlohmann::json* parent, const char* key) {
  const nlohmann::json* v = parent ? member(*parent, key) : nullptr;
  if (v && v->is_number_integer()) return v->get<std::int64_t>();
  return std::nullopt;
}

}  // namespace

RunView RunView::of(const nlohmann::json& spec) {
  RunView v;
  v.readable = spec.is_object();
  const nlohmann::json* task = member(spec, "task");
  const nlohmann::json* model = member(spec, "model");
  const nlohmann::json* train = member(spec, "train");
  v.task = string_at(task, "name");
  v.model = string_at(model, "name");
  v.seq_len = integer_at(task, "seq_len").value_or(0);
  v.seed_index = integer_at(&spec, "seed_index");
  // Stored specs with streams are checked when read (streams_problem, run_file.cpp).
  if (v.seed_index && streams_problem(spec).empty()) {
    v.replicate = replicate_of(spec);
    v.seed_label = lrb::seed_label(spec);
    v.streams = stream_tuple(spec);
    if (names_streams(spec)) {
      v.named_stream_indices = spec.at("streams");
      v.named_streams.clear();
      for (const auto& s : kStreams)
        if (spec.at("streams").contains(std::string(s.name))) v.named_streams += (v.named_streams.empty() ? "" : "+") + std::string(s.name);
    }
  }
  if (const nlohmann::json* b = member(spec, "base_seed"); b && b->is_number_unsigned()) v.base_seed = b->get<std::uint64_t>();
  if (const auto r = integer_at(&spec, "ranks_per_run")) v.ranks_per_run = static_cast<int>(*r);
  if (const std::string d = string_at(&spec, "device"); !d.empty()) v.device = d;
  v.batch_size = integer_at(train, "batch_size");
  if (const nlohmann::json* f = train ? member(*train, "flops") : nullptr; f && f->is_number() && f->get<double>() > 0)
    v.flops_budget = f->get<double>();
  if (const nlohmann::json* t = train ? member(*train, "target") : nullptr) v.target = *t;
  v.time_budget = train && member(*train, "seconds") != nullptr;
  if (const nlohmann::json* m = model ? member(*model, "match") : nullptr; m && m->is_object()) v.match = *m;
  if (const nlohmann::json* e = member(spec, "evaluate")) v.evaluate = *e;
  v.has_settings = task && model && train;
  return v;
}

}  // namespace lrb
