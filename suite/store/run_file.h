#pragma once
// One HDF5 file per run (runs/<run key>.h5), published atomically; a reader that validates
// everything it reads. Layout and rules: results/SCHEMA.md.
#include <filesystem>
#include <optional>
#include <string>

#include "suite/store/run_record.h"

namespace lrb {

namespace h5 {
class Object;
}

// Writes `record` to `path` through a temporary file (close, fsync, rename, fsync folder).
// The `complete` marker is the last thing written before the close.
void write_run_file(const std::filesystem::path& path, const RunRecord& record);

struct RunFileCheck {
  std::optional<RunRecord> record;  // set when the file is valid
  std::string reason;               // why not, when it is not ("truncated or not HDF5", ...)
  bool valid() const { return record.has_value(); }
};

// Opens and validates: HDF5 readable, schema_version known, complete marker present,
// every dataset's Fletcher32 checksum good, every text's sha256 good, the spec hashes to
// the file's run key, and, for a file in a folder named runs/, the file name is that key.
// Never throws for a bad file: the reason says what is wrong.
RunFileCheck read_run_file(const std::filesystem::path& path);

// The same layout inside any HDF5 group: the root of a run file, or /runs/<key> in
// sweep.h5. write_run_group writes the complete marker last; read_run_group makes every
// check of read_run_file except the name (the caller knows what the name should be).
// Reasons name datasets relative to the group ("/curves/train_loss").
void write_run_group(const h5::Object& group, const RunRecord& record);
RunFileCheck read_run_group(const h5::Object& group);

}  // namespace lrb
