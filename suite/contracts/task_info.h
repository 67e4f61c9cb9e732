#pragma once
// What a task tells a model and the harness: input kind and shape, classes, metrics.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lrb {

enum class Modality { Tokens, Signal, Grid };
const char* modality_name(Modality m);

struct TaskInfo {
  Modality modality = Modality::Tokens;
  // Per sample: tokens [N]; signal [N, C]; grid [C, H, W].
  std::vector<std::int64_t> input_shape;
  std::int64_t num_classes = 0;
  bool multilabel = false;
  std::int64_t vocab_size = 0;   // tokens only
  std::int64_t pad_token = -1;   // tokens only: the id masked out of attention and pooling; -1 none
  std::vector<std::string> metrics;  // the first is the primary metric
  std::int64_t tokens() const;   // sequence length a model sees before its stem (N, or H*W)

  nlohmann::json to_json() const;
  static TaskInfo from_json(const nlohmann::json& j);
};

}  // namespace lrb
