#pragma once
// Task data generated once per process and reused by every run that asks for the same
// (task, options, seq_len, seed, eval size): models compared at one seed share the bytes.
#include <memory>

#include <nlohmann/json.hpp>

#include "suite/registry/registry.h"
#include "suite/run/task.h"

namespace lrb {

std::shared_ptr<const TaskData> cached_task_data(const TaskEntry& task, const nlohmann::json& options,
                                                 std::int64_t seq_len, const DataRequest& request);
void clear_task_data_cache();

}  // namespace lrb
