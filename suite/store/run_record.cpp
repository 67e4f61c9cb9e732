#include "suite/store/run_record.h"

#include <fmt/core.h>

#include <stdexcept>

#include "suite/contracts/figure_key.h"
#include "suite/store/run_view.h"

namespace lrb {

const char* status_name(RunStatus s) {
  switch (s) {
    case RunStatus::Ok: return "ok";
    case RunStatus::Failed: return "failed";
    case RunStatus::Stopped: return "stopped";
  }
  return "?";
}

RunStatus status_from_name(const std::string& s) {
  if (s == "ok") return RunStatus::Ok;
  if (s == "failed") return RunStatus::Failed;
  if (s == "stopped") return RunStatus::Stopped;
  throw std::invalid_argument("unknown run status '" + s + "'");
}

const RunView& RunRecord::view() const {
  if (const std::shared_ptr<const RunView> v = std::atomic_load(&view_cache)) return *v;
  // Two threads may both read it: the first to store its reading wins, and the cache, once
  // set, is never replaced, so the reading returned lives as long as the record.
  auto fresh = std::make_shared<const RunView>(RunView::of(spec));
  std::shared_ptr<const RunView> expected;
  if (std::atomic_compare_exchange_strong(&view_cache, &expected, fresh)) return *fresh;
  return *expected;
}

std::string RunRecord::primary_metric() const {
  if (records.contains("task") && records["task"].contains("metrics") && !records["task"]["metrics"].empty())
    return FigureKey::task_metric(records["task"]["metrics"][0].get<std::string>()).stored();
  return "eval_accuracy";
}

std::string RunRecord::gpu_name() const {
  if (!provenance.is_object()) return "";
  const auto gpu = provenance.find("gpu");
  if (gpu == provenance.end() || !gpu->is_object()) return "";
  const auto name = gpu->find("name");
  return name != gpu->end() && name->is_string() ? name->get<std::string>() : "";
}

int RunRecord::gpu_shared_by() const {
  if (!provenance.is_object()) return 1;
  const auto gpu = provenance.find("gpu");
  if (gpu == provenance.end() || !gpu->is_object()) return 1;
  const auto n = gpu->find("shared_by");
  return n != gpu->end() && n->is_number_integer() && n->get<std::int64_t>() > 1 ? static_cast<int>(std::min<std::int64_t>(n->get<std::int64_t>(), 1 << 20)) : 1;
}

std::string RunRecord::cpu_name() const {
  if (!provenance.is_object()) return "";
  const auto cpu = provenance.find("cpu");
  if (cpu == provenance.end() || !cpu->is_object()) return "";
  const auto name = cpu->find("model_name");
  std::string out = name != cpu->end() && name->is_string() ? name->get<std::string>() : "";
  const auto family = cpu->find("family"), model = cpu->find("model");
  if (family != cpu->end() && family->is_number_integer() && model != cpu->end() && model->is_number_integer())
    out += (out.empty() ? "" : ", ") + fmt::format("family {} model {}", family->get<int>(), model->get<int>());
  return out;
}

}  // namespace lrb
