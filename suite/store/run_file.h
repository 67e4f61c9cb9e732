#pragma once
// One HDF5 file per run (runs/<run key>.h5), published atomically; a reader that validates
// everything it reads. Layout and rules: results/SCHEMA.md.
#include <filesystem>
#include <optional>
#include <string>

#include "suite/store/run_record.h"

namespace lrb {

// Writes `record` to `path` through a temporary file (close, fsync, rename, fsync folder).
// The `complete` marker is the last thing written before the close.
void write_run_file(const std::filesystem::path& path, const RunRecord& record);

struct RunFileCheck {
  std::optional<RunRecord> record;  // set when the file is valid
  std::string reason;               // why not, when it is not ("truncated or not HDF5", ...)
  bool valid() const { return record.has_value(); }
};

// Opens and validates: HDF5 readable, schema_version known, complete marker present,
// every dataset's Fletcher32 checksum good, the spec hashes to the file's run key, and
// the file name is that key. Never throws for a bad file: the reason says what is wrong.
RunFileCheck read_run_file(const std::filesystem::path& path);

}  // namespace lrb
