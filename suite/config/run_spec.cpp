#include "suite/config/run_spec.h"

#include "suite/config/run_streams.h"
#include "suite/core/seeds.h"
#include "suite/core/sha256.h"

namespace lrb {

const std::string& RunSpec::task_name() const { return spec.at("task").at("name").get_ref<const std::string&>(); }
const std::string& RunSpec::model_name() const { return spec.at("model").at("name").get_ref<const std::string&>(); }
std::int64_t RunSpec::seq_len() const { return spec.at("task").at("seq_len").get<std::int64_t>(); }
std::int64_t RunSpec::seed_index() const { return spec.at("seed_index").get<std::int64_t>(); }
std::int64_t RunSpec::stream_index(std::string_view stream) const { return lrb::stream_index(spec, stream); }
std::uint64_t RunSpec::base_seed() const { return spec.at("base_seed").get<std::uint64_t>(); }
std::uint64_t RunSpec::seed_base() const {
  return study.empty() ? base_seed() : derive_seed(base_seed(), 0, "study/" + study);
}
const json& RunSpec::task_options() const { return spec.at("task").at("options"); }
const json& RunSpec::model_options() const { return spec.at("model").at("options"); }
std::string RunSpec::device() const { return spec.at("device").get<std::string>(); }
int RunSpec::ranks_per_run() const { return spec.value("ranks_per_run", 1); }

std::string run_key_of(const json& spec) { return sha256_hex(spec.dump()); }

RunSpec make_run_spec(json spec, const TaskInfo& info, double cost) {
  RunSpec r;
  r.spec = std::move(spec);
  r.train = TrainSettings::from_json(r.spec.at("train"));
  if (const auto m = r.spec.find("measure"); m != r.spec.end()) r.measure = MeasureSettings::from_json(*m);
  r.key = run_key_of(r.spec);
  r.task_info = info;
  r.cost = cost;
  return r;
}

}  // namespace lrb
