#include "suite/run/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <mutex>
#include <nlohmann/json.hpp>

#include "suite/core/errors.h"
#include "suite/core/files.h"
#include "suite/run/model.h"

namespace lrb {

namespace {
at::Tensor to_tensor(const std::vector<double>& v) {
  return at::tensor(at::ArrayRef<double>(v), at::kDouble).clone();
}
at::Tensor to_tensor(const std::vector<std::int64_t>& v) {
  return at::tensor(at::ArrayRef<std::int64_t>(v), at::kLong).clone();
}
template <class T>
std::vector<T> from_tensor(const at::Tensor& t) {
  auto c = t.contiguous();
  return std::vector<T>(c.data_ptr<T>(), c.data_ptr<T>() + c.numel());
}
}  // namespace

void save_checkpoint(const std::filesystem::path& path, const std::string& run_key, const Model& model,
                     const torch::optim::Optimizer& optimizer, const TrainState& state) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive, optim_archive;
  model.save(model_archive);
  optimizer.save(optim_archive);
  archive.write("model", model_archive);
  archive.write("optimizer", optim_archive);
  {
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    archive.write("torch_rng", gen.get_state());
  }
  nlohmann::json meta = {{"run_key", run_key},
                         {"step", state.step},
                         {"epoch", state.epoch},
                         {"position", state.position},
                         {"order_rng", {state.order_rng[0], state.order_rng[1], state.order_rng[2], state.order_rng[3]}},
                         {"last_eval_step", state.last_eval_step},
                         {"peak_bytes", state.peak_bytes},
                         {"peak_step_bytes", state.peak_step_bytes},
                         {"attempt", state.attempt},
                         {"threads", state.threads}};
  nlohmann::json curve_names = nlohmann::json::array();
  for (const auto& [name, values] : state.curves) {
    curve_names.push_back(name);
    archive.write("curve/" + name, to_tensor(values));
  }
  meta["curves"] = curve_names;
  archive.write("meta", c10::IValue(meta.dump()));
  archive.write("order", to_tensor(state.order));
  const auto tmp = temp_path_for(path);
  try {
    archive.save_to(tmp.string());
    publish_file(tmp, path);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

void load_checkpoint(const std::filesystem::path& path, const std::string& run_key, Model& model,
                     torch::optim::Optimizer& optimizer, TrainState& state) {
  torch::serialize::InputArchive archive;
  archive.load_from(path.string());
  c10::IValue meta_value;
  archive.read("meta", meta_value);
  const auto meta = nlohmann::json::parse(meta_value.toStringRef());
  LRB_CHECK(meta.at("run_key") == run_key, "checkpoint " + path.string() + " belongs to another run");
  torch::serialize::InputArchive model_archive, optim_archive;
  archive.read("model", model_archive);
  archive.read("optimizer", optim_archive);
  model.load(model_archive);
  optimizer.load(optim_archive);
  at::Tensor rng;
  archive.read("torch_rng", rng);
  {
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(rng);
  }
  state.step = meta.at("step");
  state.epoch = meta.at("epoch");
  state.position = meta.at("position");
  for (int i = 0; i < 4; ++i) state.order_rng[i] = meta.at("order_rng")[i].get<std::uint64_t>();
  state.last_eval_step = meta.at("last_eval_step");
  state.peak_bytes = meta.at("peak_bytes");
  state.peak_step_bytes = meta.at("peak_step_bytes");
  state.attempt = meta.at("attempt");
  state.threads = meta.at("threads");
  state.curves.clear();
  for (const auto& name : meta.at("curves")) {
    at::Tensor t;
    archive.read("curve/" + name.get<std::string>(), t);
    state.curves[name.get<std::string>()] = from_tensor<double>(t);
  }
  at::Tensor order;
  archive.read("order", order);
  state.order = from_tensor<std::int64_t>(order);
}

}  // namespace lrb
