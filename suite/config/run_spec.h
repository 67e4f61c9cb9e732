#pragma once
// RunSpec: the fully resolved description of one run. Its run key is the SHA-256 of its
// canonical JSON (sorted keys, every default filled in): what defines the experiment.
// How it is executed (host, rank, threads, attempt) is provenance and is not hashed.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <optional>

#include "suite/config/train_settings.h"
#include "suite/contracts/options.h"
#include "suite/contracts/task_info.h"

namespace lrb {

inline constexpr int kRunSpecVersion = 1;

struct RunSpec {
  json spec;        // canonical: {"version","task":{name,seq_len,options},"model":{name,options},"train",...}
  std::string key;  // sha256_hex(spec.dump())
  std::int64_t index = 0;  // position in the sweep's deterministic order
  TaskInfo task_info;
  double cost = 0;  // expected work in FLOPs, for longest-first scheduling
  // spec["train"] and spec["measure"], parsed once (train_settings.h).
  TrainSettings train;
  std::optional<MeasureSettings> measure;  // a measurement run, not a training run
  // The sequential study this run belongs to (its folder's DIR/study.json), "" otherwise.
  // Not in the key: a folder holds one study. It is mixed into every seed (seed_base) and
  // recorded in the run file's provenance.
  std::string study;

  const std::string& task_name() const;
  const std::string& model_name() const;
  std::int64_t seq_len() const;
  std::int64_t seed_index() const;
  // The index `stream` (kStreams) draws at: the seed index unless [sweep] vary or fixed
  // names it (run_streams.h).
  std::int64_t stream_index(std::string_view stream) const;
  std::uint64_t base_seed() const;
  // What every random stream derives from: base_seed, mixed with the study's identity when
  // the run belongs to one (so that a new study draws seeds no earlier study looked at).
  std::uint64_t seed_base() const;
  const json& task_options() const;
  const json& model_options() const;
  std::string device() const;
  int ranks_per_run() const;  // 1 unless the spec names a data-parallel group
};

// Builds a RunSpec from its parts, resolving nothing (the parts must already be resolved).
RunSpec make_run_spec(json spec, const TaskInfo& info, double cost);
// Recomputes the key of a stored spec; readers compare it with the file's key.
std::string run_key_of(const json& spec);

}  // namespace lrb
