#include "suite/contracts/task_info.h"

#include "suite/core/errors.h"

namespace lrb {

const char* modality_name(Modality m) {
  switch (m) {
    case Modality::Tokens: return "tokens";
    case Modality::Signal: return "signal";
    case Modality::Grid: return "grid";
  }
  return "?";
}

std::int64_t TaskInfo::tokens() const {
  LRB_CHECK(!input_shape.empty(), "TaskInfo without an input shape");
  if (modality == Modality::Grid) {
    LRB_CHECK(input_shape.size() == 3, "grid input shape must be [C, H, W]");
    return input_shape[1] * input_shape[2];
  }
  return input_shape[0];
}

nlohmann::json TaskInfo::to_json() const {
  return {{"modality", modality_name(modality)}, {"input_shape", input_shape}, {"num_classes", num_classes},
          {"multilabel", multilabel}, {"vocab_size", vocab_size}, {"pad_token", pad_token},
          {"metrics", metrics}};
}

TaskInfo TaskInfo::from_json(const nlohmann::json& j) {
  TaskInfo t;
  const std::string m = j.at("modality").get<std::string>();
  t.modality = m == "tokens" ? Modality::Tokens : m == "signal" ? Modality::Signal : Modality::Grid;
  t.input_shape = j.at("input_shape").get<std::vector<std::int64_t>>();
  t.num_classes = j.at("num_classes").get<std::int64_t>();
  t.multilabel = j.at("multilabel").get<bool>();
  t.vocab_size = j.at("vocab_size").get<std::int64_t>();
  t.pad_token = j.at("pad_token").get<std::int64_t>();
  t.metrics = j.at("metrics").get<std::vector<std::string>>();
  return t;
}

}  // namespace lrb
