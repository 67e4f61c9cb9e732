#pragma once
// One cached TaskData as an HDF5 file (the disk layer of suite/run/data_cache.h). Layout:
//
//   @format_version  int64   kDataCacheFormat
//   @key             string  the cache key (sha256 of the description)
//   /description     text dataset (suite/store/text_dataset.h): the JSON the key hashes
//   /train/x, /train/y, /eval/x, /eval/y
//                    the tensors as they are in memory: same dtype (int64 -> I64LE,
//                    float32 -> F32LE, ...), same shape, row-major; chunked, Fletcher32
//   /train/@rows, /eval/@rows  int64  samples in the split
//   @complete        int64   1, written last
//
// Reading checks everything a damaged or foreign file could get wrong: the whole-file digest
// (before HDF5 opens it), the marker, the key
// and description, each chunk's checksum, dtypes and shapes against the task's description
// (suite/contracts/task_info.h) and the rows written. A file that fails gives a reason for
// the user, never data.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "suite/contracts/task_info.h"
#include "suite/contracts/task.h"

namespace lrb {

// 2: the file carries a whole-file digest. The format is part of every cache key, so files
// of another format are never read (an older lrbench sharing the folder keeps its own).
inline constexpr int kDataCacheFormat = 2;

// Writes `data` to `path` atomically, with a whole-file digest (suite/core/file_digest.h)
// that readers check before HDF5 opens the file. Throws h5::Error, EnvironmentError (the
// disk refused the bytes) or std::runtime_error (a dtype the cache does not store).
void write_data_cache_file(const std::filesystem::path& path, const std::string& key, const std::string& description,
                           const TaskData& data);

struct DataCacheCheck {
  std::optional<TaskData> data;
  std::string reason;  // why the file cannot be used ("checksum error in /train/x")
  bool valid() const { return data.has_value(); }
};

// Reads and checks a cache file written for (key, description) of a task described by
// `info`, for `eval_size` evaluation samples.
DataCacheCheck read_data_cache_file(const std::filesystem::path& path, const std::string& key,
                                    const std::string& description, const TaskInfo& info, std::int64_t eval_size);

// What breaks the Task contract (suite/contracts/task.h) for `info` and `eval_size` in `data`:
// dtypes, shapes, row counts; "" when nothing does.
std::string task_data_problem(const TaskData& data, const TaskInfo& info, std::int64_t eval_size);

}  // namespace lrb
