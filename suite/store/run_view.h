#pragma once
// A run's spec read once into typed fields: what the store and the report ask of a run (its
// task, model, seed and stream tuple, group size, device, budget), so that no reader takes the
// spec's JSON apart by key. Built by RunRecord::view() on first use. A field the spec lacks
// (a hand-made record, a file of another program) keeps its default.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "suite/config/run_streams.h"

namespace lrb {

struct RunView {
  bool readable = false;    // the spec is a JSON object (a damaged record's may be anything)
  std::string task, model;  // "" where the spec does not say
  std::int64_t seq_len = 0;
  std::optional<std::int64_t> seed_index;
  // What pairs runs across cells (run_streams.h): the seed index, or the packed tuple of
  // stream indices; and the streams the run names ("seed": none).
  std::int64_t replicate = 0;
  std::string named_streams = "seed";
  std::optional<StreamTuple> streams;  // the index each stream drew at (kStreams' order)
  nlohmann::json named_stream_indices;  // spec.streams as stored: the streams it names; null without
  std::optional<std::uint64_t> base_seed;
  int ranks_per_run = 1;  // absent from the spec at 1
  std::string device = "cpu";
  std::optional<std::int64_t> batch_size;
  std::optional<double> flops_budget;  // train.flops where positive
  nlohmann::json target;               // train.target, null without one
  bool time_budget = false;            // train.seconds: trained to a wall-time budget
  nlohmann::json match;                // model.match: widths chosen by a size match, null without
  nlohmann::json evaluate;             // spec.evaluate: [[variant]]s evaluated after training, null without
  bool has_settings = false;           // task, model and train are there to read settings from (setting_values.h)

  std::string seed_label = "seed ?";  // "seed 3", "seed 3 init 1" (run_streams.h)

  static RunView of(const nlohmann::json& spec);
};

}  // namespace lrb
