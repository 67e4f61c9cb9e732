#pragma once
// One HDF5 file per run (runs/<run key>.h5), published atomically; a reader that validates
// everything it reads. Layout and rules: results/SCHEMA.md.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

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

// How much of a run a reader takes. Whole: everything, every check. Identity: the checks
// that make the bytes a run file lrbench sealed (digest, schema_version, complete marker,
// the spec hashing to the run key, the file name) and the key, spec and status, but not the
// provenance, records, metrics and curves: what `merge` needs of a file it copies whole
// (whoever reads sweep.h5 later makes the remaining checks).
enum class RunRead { Whole, Identity };

// Opens and validates: the whole-file digest, HDF5 readable, schema_version known,
// complete marker present, every dataset's Fletcher32 checksum good, every text's sha256
// good, the spec hashes to the file's run key, and, for a file in a folder named runs/, the
// file name is that key. The file is read once, whole; the checks and the record are of
// those bytes. Never throws for a bad file: the reason says what is wrong.
RunFileCheck read_run_file(const std::filesystem::path& path, RunRead depth = RunRead::Whole);
// The same, keeping the file's bytes in `bytes` (empty when they could not be read or
// their digest does not match).
RunFileCheck read_run_file(const std::filesystem::path& path, std::string& bytes, RunRead depth);
// The same checks (but the name) on a run file's bytes read whole, its digest block first;
// `shown_as` names it in the reason.
RunFileCheck read_run_image(std::string_view bytes, const std::string& shown_as, RunRead depth = RunRead::Whole);

// The same layout inside any HDF5 group: the root of a run file, or /runs/<key> in a
// sweep.h5 of schema_version 1. write_run_group writes the complete marker last;
// read_run_group makes every check of read_run_file except the digest and the name (the
// caller knows what the name should be). Reasons name datasets relative to the group
// ("/curves/train_loss").
void write_run_group(const h5::Object& group, const RunRecord& record);
RunFileCheck read_run_group(const h5::Object& group, RunRead depth = RunRead::Whole);

}  // namespace lrb
