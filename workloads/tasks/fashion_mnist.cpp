// Fashion-MNIST (real data, Debian package dataset-fashion-mnist): 60,000 training and
// 10,000 test greyscale 28x28 images of 10 kinds of clothing. Two views: a 2-D image
// (patch-stem models) and a sequence of 784 pixel tokens, optionally under a fixed random
// permutation of pixel positions (the classic "permuted sequential MNIST" setting).
//
// Seeds: the run seed chooses which train_size training images are used and their order;
// the permutation comes from `permute_seed`, not from the run seed, so every seed sees the
// same permutation; eval is the first eval_size images of the test file for every seed.
#include <filesystem>

#include "suite/registry/registry.h"
#include "workloads/tasks/common.h"
#include "workloads/tasks/image_files.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

// folder/stem.gz, else folder/stem.
std::string data_file(const std::string& folder, const std::string& stem) {
  for (const std::string& name : {stem + ".gz", stem}) {
    const fs::path p = fs::path(folder) / name;
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  throw UserError("fashion-mnist: " + folder + " has neither " + stem + ".gz nor " + stem +
                  "; point the option 'path' at the folder holding the Fashion-MNIST idx files "
                  "(Debian: apt install dataset-fashion-mnist)");
}

ImageFileParams params_of(const json& o) {
  ImageFileParams p;
  const std::string dir = o.at("path").get<std::string>();
  p.task = "fashion-mnist";
  p.train_images = data_file(dir, "train-images-idx3-ubyte");
  p.train_labels = data_file(dir, "train-labels-idx1-ubyte");
  p.eval_images = data_file(dir, "t10k-images-idx3-ubyte");
  p.eval_labels = data_file(dir, "t10k-labels-idx1-ubyte");
  p.view = o.at("view").get<std::string>();
  p.permute = o.at("permute").get<bool>();
  p.permute_seed = o.at("permute_seed").get<std::uint64_t>();
  p.train_size = o.at("train_size").get<std::int64_t>();
  p.num_classes = 10;
  return p;
}

class FashionMnist final : public Task {
 public:
  explicit FashionMnist(ImageFileParams p) : p_(std::move(p)) {}
  TaskData generate(const DataRequest& req) const override { return generate_image_files(p_, req); }

 private:
  ImageFileParams p_;
};

TaskEntry fashion_mnist_entry() {
  TaskEntry e;
  e.name = "fashion-mnist";
  e.summary = "Fashion-MNIST (real): 28x28 clothing images or 784 pixel tokens, 10 classes";
  e.uses_seq_len = false;
  e.schema.options = {
      {"path", OptionType::String, json("/usr/share/datasets/fashion-mnist"),
       "folder with {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]"},
      view_option("grid"),
      {"permute", OptionType::Bool, json(false), "apply a fixed random permutation to pixel positions (both views)"},
      {"permute_seed", OptionType::Int, json(0), "which permutation; the same for every run seed", {}, 0, kInt64Max},
      {"train_size", OptionType::Int, json(60000), "training images; the run seed picks which and their order", {}, 1, 60000},
      metrics_option({"accuracy", "macro_f1"}),
  };
  e.schema.resolve = [](json& o, const json&) { resolve_metrics(o, false, 10); };
  e.describe = [](const json& o, std::int64_t) { return describe_image_files(params_of(o), metrics_of(o)); };
  e.make = [](const json& o, std::int64_t) -> std::unique_ptr<Task> {
    return std::make_unique<FashionMnist>(params_of(o));
  };
  e.input_files = [](const json& o) {
    const ImageFileParams p = params_of(o);
    return std::vector<std::string>{p.train_images, p.train_labels, p.eval_images, p.eval_labels};
  };
  return e;
}

LRB_REGISTER_TASK(fashion_mnist_entry());

}  // namespace
}  // namespace lrb
