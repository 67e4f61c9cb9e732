#pragma once
// Name -> factory registries for models and tasks. Adding a model or a task is one new
// file with one registration line:
//
//   LRB_REGISTER_MODEL(make_transformer_entry());
//
// Models and tasks are compiled as object files into every program that links them
// (lrb_tasks, lrb_maelre, lrb_baselines: cmake/layers.cmake), so the linker never drops a
// registration.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "suite/contracts/options.h"
#include "suite/core/macros.h"
#include "suite/contracts/task_info.h"

namespace lrb {

class Model;  // suite/contracts/model.h (LibTorch)
class Task;   // suite/contracts/task.h (LibTorch)

struct ModelEntry {
  std::string name;
  std::string summary;
  std::vector<Modality> modalities;  // the input kinds the model accepts
  OptionSchema schema;               // resolve() receives TaskInfo::to_json() as context
  // Analytic forward FLOPs for one sample (multiply-add = 2 FLOPs), from options alone.
  std::function<double(const json& options, const TaskInfo& task)> flops;
  // Parameter count of an instance, from options alone (where no closed form is written,
  // by building one: params_by_building in suite/contracts/model.h). What a sweep's
  // `dim = { match = "params", to = ... }` searches widths by; absent: not matchable.
  std::function<double(const json& options, const TaskInfo& task)> params;
  std::function<std::shared_ptr<Model>(const json& options, const TaskInfo& task)> make;
  // Settings a trained instance can be evaluated under (Model::set_inference): what a
  // sweep's [[variant]] tables may set. resolve() receives {"model": options, "task":
  // TaskInfo::to_json()}. No options: the model has no variants.
  OptionSchema inference;
  // Options for a small instance (a few thousand parameters): used by the model-zoo tests
  // and as a cheap example; merged over the defaults.
  json small_options = json::object();
};

struct TaskEntry {
  std::string name;
  std::string summary;
  OptionSchema schema;  // resolve() receives {"seq_len": N} as context
  bool uses_seq_len = true;  // false for fixed-size data (e.g. 28x28 images)
  std::function<TaskInfo(const json& options, std::int64_t seq_len)> describe;
  std::function<std::unique_ptr<Task>(const json& options, std::int64_t seq_len)> make;
  // Generated data is cached on disk keyed by a hash of (task, options, seq_len, seed,
  // eval size, data_version): bump data_version whenever a change of the generator changes
  // its output, or caches would keep serving the old bytes.
  int data_version = 1;
  // Files the data is read from (file tasks): their size and modification time join the
  // cache key, so an edited file is read again rather than served from the cache.
  std::function<std::vector<std::string>(const json& options)> input_files;
};

template <class Entry>
class Registry {
 public:
  static Registry& instance() {
    static Registry r;
    return r;
  }
  bool add(Entry e) {
    const std::string name = e.name;
    auto [it, inserted] = entries_.emplace(name, std::move(e));
    (void)it;
    if (!inserted) duplicate(name);
    return true;
  }
  const Entry* find(const std::string& name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [n, e] : entries_) out.push_back(n);
    return out;
  }
  const std::map<std::string, Entry>& entries() const { return entries_; }

 private:
  [[noreturn]] static void duplicate(const std::string& name);
  std::map<std::string, Entry> entries_;
};

using ModelRegistry = Registry<ModelEntry>;
using TaskRegistry = Registry<TaskEntry>;

}  // namespace lrb

#define LRB_REGISTER_MODEL(entry) \
  static const bool LRB_CONCAT(lrb_model_registered_, __LINE__) = ::lrb::ModelRegistry::instance().add(entry)
#define LRB_REGISTER_TASK(entry) \
  static const bool LRB_CONCAT(lrb_task_registered_, __LINE__) = ::lrb::TaskRegistry::instance().add(entry)
