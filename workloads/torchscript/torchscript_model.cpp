// model = "torchscript": a model written in PyTorch, scripted or traced and saved with
// torch.jit.save, trained by lrbench like any other (docs/python-models.md). The module's
// parameters and buffers are registered as this model's own (the very tensors, so the
// optimizer, checkpoints, device moves and data-parallel groups reach the module), and each
// run draws its own initialisation through the module's reset_parameters(seed).
#include <ATen/ATen.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "suite/contracts/model.h"
#include "suite/registry/registry.h"
#include "workloads/torchscript/script_module.h"

namespace lrb {
namespace {

class ScriptModel final : public Model {
 public:
  ScriptModel(ScriptFile file, const ScriptFit& fit, TaskInfo task, bool same_init)
      : module_(std::move(file.module)), takes_keep_(fit.takes_keep), task_(std::move(task)) {
    // A tensor tied under two names is registered once: the optimizer must step it once.
    std::set<const void*> seen;
    for (const auto& p : module_.named_parameters(true))
      if (seen.insert(p.value.unsafeGetTensorImpl()).second) holder_of(p.name).register_parameter(leaf(p.name), p.value, p.value.requires_grad());
    for (const auto& b : module_.named_buffers(true))
      if (seen.insert(b.value.unsafeGetTensorImpl()).second) holder_of(b.name).register_buffer(leaf(b.name), b.value);
    provenance_ = {{"file", file.path},
                   {"sha256", file.sha256},
                   {"same_init", same_init},
                   {"initialisation", same_init ? "every seed from the weights saved in the file" : "reset_parameters(seed)"}};
  }

  at::Tensor forward(const at::Tensor& x) override {
    // The plain interpreter: the optimising executor re-plans the graph after its first
    // calls (and may fuse operators, on a GPU above all); a resumed run, a new process,
    // would re-plan at another step, and could then not repeat the stopped one bit for bit.
    torch::jit::GraphOptimizerEnabledGuard plain(false);
    std::vector<c10::IValue> inputs{x};
    if (takes_keep_) inputs.emplace_back(keep_mask_of(x, task_));
    return module_.forward(inputs).toTensor();
  }

  void train(bool on) override {
    torch::nn::Module::train(on);
    module_.train(on);
  }

  nlohmann::json provenance() const override { return provenance_; }

 private:
  static std::string leaf(const std::string& name) { return name.substr(name.rfind('.') + 1); }

  // The submodule that holds `name` ("layers.0.weight": layers, then 0), made on first use,
  // so this model's names are the module's.
  torch::nn::Module& holder_of(const std::string& name) {
    torch::nn::Module* at = this;
    std::string path;
    std::size_t start = 0;
    for (std::size_t dot = name.find('.'); dot != std::string::npos; start = dot + 1, dot = name.find('.', start)) {
      const std::string part = name.substr(start, dot - start);
      path += (path.empty() ? "" : ".") + part;
      auto& holder = holders_[path];
      if (!holder) holder = at->register_module(part, std::make_shared<torch::nn::Module>());
      at = holder.get();
    }
    return *at;
  }

  torch::jit::Module module_;
  bool takes_keep_;
  TaskInfo task_;
  std::map<std::string, std::shared_ptr<torch::nn::Module>> holders_;
  nlohmann::json provenance_;
};

struct Checked {
  std::string sha256;
  ScriptFit fit;
};

// Expanding a sweep resolves the model once per task and combination, and asks for its
// FLOPs: the file is loaded and tried once per (file version, task), not each time.
Checked checked_file(const std::string& path, bool same_init, const TaskInfo& task) {
  static std::mutex mutex;
  static std::map<std::string, Checked> cache;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  const auto mtime = ec ? std::filesystem::file_time_type{} : std::filesystem::last_write_time(path, ec);
  const std::string key = ec ? "" : path + '\n' + std::to_string(size) + '\n' + std::to_string(mtime.time_since_epoch().count()) +
                                        '\n' + (same_init ? "1" : "0") + task.to_json().dump();
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); !key.empty() && it != cache.end()) return it->second;
  ScriptFile file = load_script_file(path);
  Checked c{file.sha256, check_script_fits(file, task, same_init)};
  if (!key.empty()) cache[key] = c;
  return c;
}

void resolve_torchscript(json& o, const json& context) {
  if (!o.at("file_sha256").is_null())
    throw OptionError("file_sha256", "'file_sha256' is computed by lrbench from the model file; remove it");
  if (o.at("file").is_null())
    throw OptionError("file", "'file' is required: the module saved with torch.jit.save (docs/python-models.md)");
  try {
    o["file_sha256"] = checked_file(o.at("file"), o.at("same_init"), TaskInfo::from_json(context)).sha256;
  } catch (const UserError& e) {
    throw OptionError("file", e.what());
  }
}

ModelEntry torchscript_entry() {
  ModelEntry e;
  e.name = "torchscript";
  e.summary = "a model written in PyTorch: a module saved with torch.jit.save (docs/python-models.md)";
  e.modalities = {Modality::Tokens, Modality::Signal, Modality::Grid};
  e.schema.options = {
      {"file", OptionType::String, json(), "the module saved with torch.jit.save; a relative path is from where lrbench runs (required)"},
      {"same_init", OptionType::Bool, json(false),
       "true: every seed starts from the weights saved in the file (for a module without reset_parameters; the report warns)"},
      {"file_sha256", OptionType::String, json(), "the file's SHA-256, filled in by lrbench: part of the run's identity (never set it)",
       {}, std::nullopt, std::nullopt, true, false},
  };
  e.schema.resolve = resolve_torchscript;
  e.flops = [](const json& o, const TaskInfo& t) {
    return checked_file(o.at("file"), o.at("same_init"), t).fit.flops_per_sample;
  };
  e.make = [](const json& o, const TaskInfo& t) -> std::shared_ptr<Model> {
    const std::string path = o.at("file");
    const bool same_init = o.at("same_init");
    ScriptFile file = load_script_file(path);
    if (file.sha256 != o.at("file_sha256").get<std::string>())
      throw UserError(path + " changed after the sweep was planned (SHA-256 " + file.sha256.substr(0, 12) + ", planned " +
                      o.at("file_sha256").get<std::string>().substr(0, 12) +
                      "): a changed model is a new run; start the sweep again to plan it");
    const ScriptFit fit = script_signatures(file, same_init);
    // The harness seeded the default generator from the run's seeds: the seed handed to
    // the module is the run's own.
    if (!same_init) file.module.run_method("reset_parameters", at::randint(0, std::int64_t{1} << 62, {1}, at::kLong).item<std::int64_t>());
    return std::make_shared<ScriptModel>(std::move(file), fit, t, same_init);
  };
  e.params = params_by_building(e.make);
  return e;
}

LRB_REGISTER_MODEL(torchscript_entry());

}  // namespace
}  // namespace lrb
