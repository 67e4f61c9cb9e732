// Image classification from the user's own idx(.gz) files (the MNIST file format): images
// [n, H, W] or [n, C, H, W], labels [n]. Unsigned-byte pixels become [0, 1] floats (grid)
// or tokens 0-255 (sequence); other element types are used as they are (grid only).
// Evaluation comes from a second pair of files, or
// is held out of the training file (eval_fraction, chosen by split_seed so that every run
// seed evaluates on the same records). Files are checked when the sweep is expanded, so a
// missing file, a wrong shape, a label out of range or a truncated file stops the sweep
// before any training.
#include "suite/registry/registry.h"
#include "workloads/tasks/common.h"
#include "workloads/tasks/image_files.h"

namespace lrb {
namespace {

ImageFileParams params_of(const json& o) {
  ImageFileParams p;
  p.task = "idx-file";
  p.train_images = o.at("images").get<std::string>();
  p.train_labels = o.at("labels").get<std::string>();
  p.eval_images = o.at("eval_images").get<std::string>();
  p.eval_labels = o.at("eval_labels").get<std::string>();
  p.eval_fraction = o.at("eval_fraction").get<double>();
  p.split_seed = o.at("split_seed").get<std::uint64_t>();
  p.view = o.at("view").get<std::string>();
  p.permute = o.at("permute").get<bool>();
  p.permute_seed = o.at("permute_seed").get<std::uint64_t>();
  p.train_size = o.at("train_size").get<std::int64_t>();
  p.num_classes = o.at("num_classes").get<std::int64_t>();
  return p;
}

class IdxFile final : public Task {
 public:
  explicit IdxFile(ImageFileParams p) : p_(std::move(p)) {}
  TaskData generate(const DataRequest& req) const override { return generate_image_files(p_, req); }

 private:
  ImageFileParams p_;
};

TaskEntry idx_file_entry() {
  TaskEntry e;
  e.name = "idx-file";
  e.summary = "image classification from idx(.gz) files (MNIST format) the user points to";
  e.uses_seq_len = false;
  e.schema.options = {
      {"images", OptionType::String, json(), "training images: idx file [n, H, W] or [n, C, H, W] (required)"},
      {"labels", OptionType::String, json(), "training labels: idx file [n] of integers (required)"},
      {"eval_images", OptionType::String, json(""), "evaluation images; empty: hold out eval_fraction of the training file"},
      {"eval_labels", OptionType::String, json(""), "evaluation labels (with eval_images)"},
      {"eval_fraction", OptionType::Float, json(0.1), "share of the training file held out when eval_images is empty", {}, 0.0, 0.9},
      {"split_seed", OptionType::Int, json(0), "which records are held out; the same for every run seed", {}, 0, kInt64Max},
      view_option("grid"),
      {"permute", OptionType::Bool, json(false), "apply a fixed random permutation to pixel positions"},
      {"permute_seed", OptionType::Int, json(0), "which permutation; the same for every run seed", {}, 0, kInt64Max},
      {"train_size", OptionType::Int, json(0), "training records used (0: all); the run seed picks which", {}, 0, {}},
      {"num_classes", OptionType::Int, json(0), "number of classes (0: largest training label + 1)", {}, 0, 1 << 20},
      metrics_option({"accuracy", "macro_f1"}),
  };
  e.schema.resolve = [](json& o, const json&) {
    for (const char* k : {"images", "labels"})
      if (o.at(k).is_string() && o.at(k).get<std::string>().empty())
        throw OptionError(k, std::string("'") + k + "' is empty; give the path of an idx file");
    if (o.at("eval_images").get<std::string>().empty() != o.at("eval_labels").get<std::string>().empty())
      throw OptionError("eval_images", "give both eval_images and eval_labels, or neither");
    const auto k = o.at("num_classes").get<std::int64_t>();
    if (k == 1) throw OptionError("num_classes", "num_classes must be at least 2 (or 0 to count from the labels)");
    resolve_metrics(o, false, k);
  };
  e.describe = [](const json& o, std::int64_t) {
    TaskInfo info = describe_image_files(params_of(o), metrics_of(o));
    json check = o;
    resolve_metrics(check, false, info.num_classes);  // top-k against the counted classes
    return info;
  };
  e.make = [](const json& o, std::int64_t) -> std::unique_ptr<Task> { return std::make_unique<IdxFile>(params_of(o)); };
  e.input_files = [](const json& o) {
    std::vector<std::string> files;
    for (const char* k : {"images", "labels", "eval_images", "eval_labels"})
      if (!o.at(k).get<std::string>().empty()) files.push_back(o.at(k).get<std::string>());
    return files;
  };
  return e;
}

LRB_REGISTER_TASK(idx_file_entry());

}  // namespace
}  // namespace lrb
