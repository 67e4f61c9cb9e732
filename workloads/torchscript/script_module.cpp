#include "workloads/torchscript/script_module.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/version.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/serialization/import.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <string_view>
#include <vector>

#include "suite/core/call_watch.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/files.h"
#include "suite/core/sha256.h"
#include "suite/core/shape_text.h"
#include "workloads/torchscript/forward_flops.h"
#include "workloads/torchscript/zip_check.h"

namespace lrb {
namespace {

constexpr std::uintmax_t kMaxScriptBytes = std::uintmax_t{1} << 36;  // 64 GiB: the file is read whole
constexpr std::int64_t kTrialBatch = 2;
const char* const kContract = "docs/python-models.md";

// LibTorch's whole reason, without the C++ backtrace some builds append, bounded.
std::string libtorch_reason(std::string why) {
  for (const char* backtrace : {"\nException raised from ", "\nframe #0"})
    if (const auto at = why.find(backtrace); at != std::string::npos) why.erase(at);
  while (!why.empty() && std::isspace(static_cast<unsigned char>(why.back()))) why.pop_back();
  const auto start = std::find_if(why.begin(), why.end(), [](char c) { return !std::isspace(static_cast<unsigned char>(c)); });
  why.erase(why.begin(), start);
  constexpr std::size_t kMaxReason = 4000;
  if (why.size() > kMaxReason) why = why.substr(0, kMaxReason) + " [... cut at 4,000 characters]";
  return why;
}

// Whether an archive holds TorchScript: its code and constants records (torch.save's holds
// neither). Their names stand in plain text in the zip's headers.
bool holds_script(std::string_view bytes) {
  return bytes.find("/code/__torch__") != std::string_view::npos || bytes.find("/constants.pkl") != std::string_view::npos;
}

// LibTorch's reason, said as what it means for the user.
std::string load_problem(const std::string& path, const std::string& why, std::string_view bytes) {
  const std::string reason = libtorch_reason(why);
  if (why.find("Attempted to read a PyTorch file with version") != std::string::npos)
    return path + " was saved by a newer PyTorch than lrbench's LibTorch " TORCH_VERSION " reads (" + reason +
           "): save it with PyTorch " TORCH_VERSION " (or older), or build lrbench against a newer LibTorch";
  if (!holds_script(bytes))
    return path + " is not TorchScript (it holds no TorchScript code: a file torch.save wrote, a state dict or a pickled "
                  "module): script or trace the module and save it with torch.jit.save (" + std::string(kContract) + ")";
  if (why.find("code/") != std::string::npos)
    return path + " is TorchScript, but LibTorch " TORCH_VERSION " cannot compile its code (" + reason +
           "): a newer PyTorch may have saved operators this LibTorch lacks; save it with PyTorch " TORCH_VERSION
           " or older, or avoid the operator named";
  if (why.find("PytorchStreamReader") != std::string::npos)
    return path + " is damaged or is not a file torch.jit.save wrote (" + reason + "): save the module again";
  return path + " could not be loaded as TorchScript (" + reason + "); if it was saved by a newer PyTorch than " +
         TORCH_VERSION + ", save it with PyTorch " TORCH_VERSION " or older";
}

std::string schema_text(const torch::jit::Method& m) {
  std::ostringstream s;
  s << m.function().getSchema();
  return s.str();
}

bool is_tensor(const c10::Argument& a) { return a.type()->kind() == c10::TypeKind::TensorType; }

// forward(self, x: Tensor) -> Tensor or forward(self, x: Tensor, keep: Tensor) -> Tensor.
bool forward_takes_keep(const ScriptFile& f) {
  const auto forward = f.module.find_method("forward");
  if (!forward) throw UserError(f.path + " has no forward method; " + kContract + " says what forward takes");
  const auto& args = forward->function().getSchema().arguments();
  const auto& returns = forward->function().getSchema().returns();
  const bool fits = (args.size() == 2 || args.size() == 3) && is_tensor(args[1]) && (args.size() == 2 || is_tensor(args[2])) &&
                    returns.size() == 1 && is_tensor(returns[0]);
  if (!fits)
    throw UserError(f.path + ": forward must be forward(self, x: Tensor) -> Tensor or forward(self, x: Tensor, keep: Tensor) -> "
                    "Tensor; this module's is " + schema_text(*forward) + " (" + kContract + ")");
  return args.size() == 3;
}

// reset_parameters(self, seed: int), exported with @torch.jit.export.
bool has_reset(const ScriptFile& f, bool same_init) {
  const auto reset = f.module.find_method("reset_parameters");
  if (!reset) {
    if (same_init) return false;
    throw UserError(f.path + " exports no reset_parameters(seed: int): every seed would start from the weights saved in "
                    "the file. Add the method with @torch.jit.export (" + std::string(kContract) +
                    "), or set same_init = true to train every seed from the saved weights (the report warns)");
  }
  const auto& args = reset->function().getSchema().arguments();
  if (args.size() != 2 || args[1].type()->kind() != c10::TypeKind::IntType)
    throw UserError(f.path + ": reset_parameters must take one int (the run's seed); this module's is " + schema_text(*reset));
  return true;
}

// A call into the file's code while the sweep is read, watched (suite/core/call_watch.h): a
// call that never returns ends the process naming the file, with exit 3 after a stop signal
// (nothing ran yet) and 2 past step_time_limit (the file is at fault).
WatchedCall watch_file_call(const std::string& what) {
  return WatchedCall(what, [](bool stopped, const std::string& why) {
    std::fprintf(stderr, "lrbench: %s%s\n", stopped ? "stopped: " : "error: ", why.c_str());
    return stopped ? kExitStopped : kExitUsage;
  });
}

// A batch of kTrialBatch inputs of the task's kind and shape; token ids cover the vocabulary
// and the second sample ends in padding where the task pads.
at::Tensor trial_batch(const TaskInfo& task) {
  std::vector<std::int64_t> shape{kTrialBatch};
  shape.insert(shape.end(), task.input_shape.begin(), task.input_shape.end());
  if (task.modality != Modality::Tokens)
    return at::linspace(-1.0, 1.0, c10::multiply_integers(shape), at::kFloat).reshape(shape);
  const std::int64_t vocab = std::max<std::int64_t>(task.vocab_size, 1);
  at::Tensor ids = at::arange(c10::multiply_integers(shape), at::kLong).mul_(7).remainder_(vocab).reshape(shape);
  if (task.pad_token >= 0 && vocab > 1) {
    ids.masked_fill_(ids == task.pad_token, (task.pad_token + 1) % vocab);
    const std::int64_t n = shape[1];
    ids[1].narrow(0, n - n / 4, n / 4).fill_(task.pad_token);
  }
  return ids;
}

// Runs forward once on a trial batch; returns its counted FLOPs per sample.
double try_forward(ScriptFile& f, const TaskInfo& task, bool takes_keep) {
  const at::Tensor x = trial_batch(task);
  std::vector<c10::IValue> inputs{x};
  if (takes_keep) inputs.emplace_back(keep_mask_of(x, task));
  f.module.train(true);
  c10::IValue out;
  double flops = 0;
  try {
    torch::jit::GraphOptimizerEnabledGuard plain(false);
    const MatmulFlopCounter counter;
    const WatchedCall watched = watch_file_call("the trial forward of " + f.path);
    out = f.module.forward(inputs);
    flops = counter.flops();
  } catch (const std::exception& e) {
    throw UserError(f.path + ": forward failed on a batch of " + shape_text(x.sizes()) + " " + modality_name(task.modality) +
                    " inputs (" + libtorch_reason(e.what()) + "); " + kContract + " lists what each kind of task passes");
  }
  const std::string expected = "[" + std::to_string(kTrialBatch) + ", " + std::to_string(task.num_classes) + "]";
  if (!out.isTensor())
    throw UserError(f.path + ": forward returned a " + out.tagKind() + ", not a tensor of logits " + expected);
  const at::Tensor logits = out.toTensor();
  if (logits.dim() != 2 || logits.size(0) != kTrialBatch || logits.size(1) != task.num_classes)
    throw UserError(f.path + ": forward returned logits of shape " + shape_text(logits.sizes()) + " for a batch of " +
                    std::to_string(kTrialBatch) + "; the task has " + std::to_string(task.num_classes) + " " +
                    (task.multilabel ? "labels" : "classes") + ", so lrbench expects " + expected +
                    ": save the module with that many outputs");
  if (!at::isFloatingType(logits.scalar_type()))
    throw UserError(f.path + ": forward returned " + std::string(c10::toString(logits.scalar_type())) +
                    " logits; return floating point (float32) logits");
  if (!logits.requires_grad())
    throw UserError(f.path + ": forward's logits depend on no trainable parameter (requires_grad is false): nothing "
                    "would learn; check that the parameters are nn.Parameters with requires_grad = True");
  return flops > 0 ? flops / static_cast<double>(kTrialBatch) : std::nan("");
}

// Two seeds must give two initialisations: a reset_parameters that ignores its seed would give
// every seed the same weights while the provenance says each drew its own. The weights and
// the default generator are left as they were (reset_parameters may seed it).
void check_reset_uses_its_seed(ScriptFile& f) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  const at::Tensor state = [&] {  // not held across reset_parameters: torch.manual_seed takes the lock too
    std::lock_guard<std::mutex> lock(generator.mutex());
    return generator.get_state();
  }();
  std::vector<at::Tensor> saved, first;  // the file's weights are put back: checking changes nothing
  for (const auto& p : f.module.parameters(true)) saved.push_back(p.detach().clone());
  const auto restore = [&] {
    const at::NoGradGuard no_grad;
    std::size_t i = 0;
    for (const auto& p : f.module.parameters(true))
      if (i < saved.size() && p.sizes() == saved[i].sizes()) p.copy_(saved[i++]);
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
  };
  bool same = true;
  try {
    const at::NoGradGuard no_grad;
    const WatchedCall watched = watch_file_call("reset_parameters of " + f.path);
    f.module.run_method("reset_parameters", std::int64_t{1});
    for (const auto& p : f.module.parameters(true)) first.push_back(p.detach().clone());
    f.module.run_method("reset_parameters", std::int64_t{2});
    std::size_t i = 0;
    for (const auto& p : f.module.parameters(true)) same = same && i < first.size() && at::equal(p, first[i++]);
  } catch (const std::exception& e) {
    restore();
    throw UserError(f.path + ": reset_parameters(seed) failed (" + std::string(e.what()) + ")");
  }
  restore();
  if (same)
    throw UserError(f.path + ": reset_parameters ignores its seed: seeds 1 and 2 gave the very same weights, so every seed "
                    "of a sweep would start alike. Draw the weights from the seed (torch.manual_seed(seed), then the "
                    "initialisers), or set same_init = true to train every seed from the saved weights (the report warns)");
}

}  // namespace

ScriptFile load_script_file(const std::string& path) {
  const std::string bytes = read_user_file(path, kMaxScriptBytes, "model file");
  ScriptFile f;
  f.path = path;
  f.sha256 = sha256_hex(bytes);
  const WatchedCall watched = watch_file_call("loading " + path);  // LibTorch's parser cannot be interrupted either
  // LibTorch checks the archive's structure but not its records' checksums.
  if (const std::string damage = zip_damage(bytes); !damage.empty())
    throw UserError(path + " is damaged or is not a file torch.jit.save wrote (" + damage + "): save the module again");
  std::istringstream in(bytes);
  try {
    f.module = torch::jit::load(in, c10::Device(at::kCPU));
  } catch (const std::exception& e) {
    throw UserError(load_problem(path, e.what(), bytes));
  }
  return f;
}

ScriptFit script_signatures(const ScriptFile& file, bool same_init) {
  ScriptFit fit;
  fit.takes_keep = forward_takes_keep(file);
  fit.has_reset = has_reset(file, same_init);
  return fit;
}

ScriptFit check_script_fits(ScriptFile& file, const TaskInfo& task, bool same_init) {
  ScriptFit fit = script_signatures(file, same_init);
  if (fit.has_reset && !same_init) check_reset_uses_its_seed(file);
  const at::AutoGradMode grad(true);
  fit.flops_per_sample = try_forward(file, task, fit.takes_keep);
  return fit;
}

at::Tensor keep_mask_of(const at::Tensor& x, const TaskInfo& task) {
  switch (task.modality) {
    case Modality::Tokens:
      return task.pad_token >= 0 ? x.ne(task.pad_token) : at::ones(x.sizes(), x.options().dtype(at::kBool));
    case Modality::Signal: return at::ones({x.size(0), x.size(1)}, x.options().dtype(at::kBool));
    case Modality::Grid: return at::ones({x.size(0), x.size(2), x.size(3)}, x.options().dtype(at::kBool));
  }
  return {};
}

}  // namespace lrb
