#include "suite/run/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "suite/core/errors.h"
#include "suite/core/file_digest.h"
#include "suite/core/files.h"
#include "suite/contracts/model.h"

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
  // The digest block, then the archive: sealed and written in one atomic publish.
  std::ostringstream body;
  archive.save_to(body);
  std::string bytes(kDigestBlockBytes, '\0');
  bytes += body.str();
  seal_digest(bytes);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);  // a failure shows in the write below
  write_file_atomic(path, bytes);
}

void load_checkpoint(const std::filesystem::path& path, const std::string& run_key, Model& model,
                     torch::optim::Optimizer& optimizer, TrainState& state) {
  std::string bytes;
  try {
    bytes = read_file(path);
  } catch (const std::exception& e) {
    throw BadCheckpoint(e.what());
  }
  if (const std::string problem = sealed_bytes_problem(bytes); !problem.empty()) throw BadCheckpoint(problem);
  const std::string_view body = digest_body(bytes);
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(body.data(), body.size());
    c10::IValue meta_value;
    archive.read("meta", meta_value);
    const auto meta = nlohmann::json::parse(meta_value.toStringRef());
    // Named by its key and sealed by the writer: another key means a file copied or renamed.
    if (meta.at("run_key") != run_key)
      throw BadCheckpoint("written for another run (key " + meta.at("run_key").get<std::string>() + ")");
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
  } catch (const BadCheckpoint&) {
    throw;
  } catch (const c10::Error& e) {
    throw BadCheckpoint(std::string("cannot load it: ") + e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw BadCheckpoint(std::string("cannot load it: ") + e.what());
  }
}

}  // namespace lrb
