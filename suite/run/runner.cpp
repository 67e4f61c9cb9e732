#include "suite/run/runner.h"

#include "suite/contracts/figure_key.h"
#include "suite/run/run_execution.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <torch/autograd.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/core.h>

#include "suite/core/environment.h"
#include "suite/core/errors.h"
#include "suite/core/exit_codes.h"
#include "suite/core/seeds.h"
#include "suite/core/stop_flag.h"
#include "suite/mpi/run_group.h"
#include "suite/registry/registry.h"
#include "suite/run/checkpoint.h"
#include "suite/run/data_cache.h"
#include "suite/run/derived_figures.h"
#include "suite/run/gradient_exchange.h"
#include "suite/contracts/figures.h"
#include "suite/contracts/metrics.h"
#include "suite/contracts/model.h"
#include "suite/run/variant_eval.h"
#include "suite/runtime/counting_allocator.h"
#include "suite/run/matmul_peak.h"
#include "suite/run/step_phases.h"
#include "suite/runtime/cuda_device.h"
#include "suite/runtime/device_memory.h"
#include "suite/runtime/precision.h"
#include "suite/store/results_folder.h"
#include "suite/store/results_layout.h"
#include "suite/store/run_file.h"

namespace lrb {

namespace fs = std::filesystem;

double learning_rate_at(const TrainSettings& train, std::int64_t step, double elapsed_seconds) {
  const double lr = train.lr;
  double p = 0;  // progress of the decay after warm-up, in [0, 1]
  if (train.time_budget()) {
    // A time budget's schedule follows the time its steps have taken.
    const double t = std::min(1.0, elapsed_seconds / train.seconds), w = train.warmup_share;
    if (t < w) return lr * t / w;
    p = w < 1 ? (t - w) / (1 - w) : 1.0;
  } else {
    const std::int64_t steps = train.steps;
    const std::int64_t warmup = train.warmup_steps;
    if (step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
    const double span = static_cast<double>(std::max<std::int64_t>(1, steps - warmup));
    p = std::min(1.0, static_cast<double>(step - warmup) / span);
  }
  const std::string& schedule = train.schedule;
  if (schedule == "cosine") return lr * 0.5 * (1.0 + std::cos(M_PI * p));
  if (schedule == "linear") return lr * (1.0 - p);
  return lr;
}

at::Tensor RunExecution::loss_of(const at::Tensor& model_logits, const at::Tensor& y, bool multilabel) {
  // The loss in fp32 whatever the forward's precision (bf16 logits under autocast).
  const at::Tensor logits = model_logits.scalar_type() == at::kFloat ? model_logits : model_logits.to(at::kFloat);
  if (multilabel) return at::binary_cross_entropy_with_logits(logits, y.to(logits.scalar_type()));
  return at::cross_entropy_loss(logits, y);
}

std::string RunExecution::error_text(const std::exception& e) {
  if (auto* c10e = dynamic_cast<const c10::Error*>(&e)) return c10e->what_without_backtrace();
  return e.what();
}

RunOutcome RunExecution::execute() {
  const auto wall_start = std::chrono::steady_clock::now();
  wall_start_ = wall_start;
  at::set_num_threads(ctx_.threads);
  record_.key = run_.key;
  record_.spec = run_.spec;
  record_.provenance = ctx_.provenance;
  record_.provenance["threads"] = ctx_.threads;
  record_.provenance["started_at"] = utc_now_iso();
  record_.records["task"] = run_.task_info.to_json();
  RunOutcome out;
  if (in_group()) record_.provenance["data_parallel"] = ctx_.group->describe();
  try {
    if (in_group()) {
      // A member that cannot start (its data, its memory) stops the whole group here,
      // before the first collective of training.
      std::string why;
      try {
        prepare();
      } catch (const std::exception& e) {
        why = error_text(e);
      }
      fail_if_any_member_failed(why);
      // NCCL: the group's communicator, made by its first run on the device and reused. A
      // group that cannot make it fails this run on every member; the sweep goes on.
      if (device_.is_cuda())
        if (const std::string no_exchange = ctx_.group->open_device_exchange(device_.index()); !no_exchange.empty())
          throw std::runtime_error(no_exchange);
    } else {
      prepare();
    }
    resume_from_checkpoint();
    if (measuring()) measure();
    else train_and_evaluate();
    // The variants evaluate the trained weights, which every member holds: member 0 alone.
    if (run_.spec.contains("evaluate") && writes_files()) evaluate_variants_of_run();
    out.status = RunStatus::Ok;
  } catch (const StopRequested&) {
    out.status = RunStatus::Stopped;
    out.error = stop_signal() != 0
                    ? fmt::format("stopped by signal {} at step {}; run the same command again to resume", stop_signal(), state_.step)
                    : fmt::format("stopped at step {} because another rank of the run's group was asked to stop; run the "
                                  "same command again to resume",
                                  state_.step);
  } catch (const std::exception& e) {
    out.status = RunStatus::Failed;
    if (CpuMemoryCounter::budget_hit())
      out.error = fmt::format("memory budget exceeded at step {}: {}", state_.step, error_text(e));
    else if (is_device_out_of_memory(e))
      out.error = fmt::format("device out of memory on {} at step {}: {}", device_.str(), state_.step, error_text(e));
    else
      out.error = fmt::format("{} at step {}", error_text(e), state_.step);
  }
  CpuMemoryCounter::set_limit(0);
  CpuMemoryCounter::clear_budget_hit();
  // A stopped measurement starts again from scratch: it has nothing worth keeping.
  if (out.status == RunStatus::Stopped && !measuring() && writes_files()) {
    try {
      if (model_ && optimizer_) save_checkpoint(folder().checkpoint(run_.key), run_.key, *model_, *optimizer_, state_);
    } catch (const std::exception& e) {
      out.error += "; the checkpoint could not be written: " + error_text(e);
    }
  }
  finish_record(out, wall_start);
  if (ctx_.publish && writes_files()) {
    fs::create_directories(folder().runs());
    write_run_file(folder().run_file(run_.key), record_);
    if (out.status != RunStatus::Stopped) {
      std::error_code ec;
      fs::remove(folder().checkpoint(run_.key), ec);
    }
  }
  out.record = record_;
  return out;
}

void RunExecution::prepare() {
  const TaskEntry* task = TaskRegistry::instance().find(run_.task_name());
  const ModelEntry* model = ModelRegistry::instance().find(run_.model_name());
  LRB_CHECK(task && model, "run names an unregistered task or model");
  const auto data_index = static_cast<std::uint64_t>(run_.stream_index(kStreamData));
  CachedTaskData loaded = cached_task_data(
      *task, run_.task_options(), run_.seq_len(), run_.task_info,
      DataRequest{derive_seed(run_.seed_base(), data_index, kStreamData), run_.train.eval_size}, ctx_.data_cache);
  data_ = std::move(loaded.data);
  record_.provenance["data_cache"] = loaded.source.to_json();
  if (!run_.study.empty()) record_.provenance["study_id"] = run_.study;  // what its seeds were mixed with
  // The tensors' own bytes: the same whether the data was generated, read from the cache
  // or shared with an earlier run in memory (a live-bytes difference is not).
  data_bytes_ = 0;
  for (const Split* split : {&data_->train, &data_->eval})
    for (const at::Tensor* t : {&split->x, &split->y}) data_bytes_ += static_cast<std::int64_t>(t->nbytes());
  LRB_CHECK(data_->train.size() > 0, "task produced no training samples");

  if (run_.device() == "cuda") {
    if (!at::hasCUDA())
      throw UserError("device = \"cuda\" but this LibTorch has no CUDA: build with a CUDA LibTorch (Torch_DIR) or use device = \"cpu\"");
    device_ = at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(ctx_.device_index));
  }

  const std::int64_t budget = run_.train.memory_budget;
  if (budget > 0) CpuMemoryCounter::set_limit(budget);
  set_device_memory_limit(device_, budget);
  record_.provenance["memory_source"] = run_memory_source(device_);
  // bf16 where the hardware lacks it fails the run with the reason (the job refuses it
  // at its start too, where the whole job shares this machine's answer).
  if (const std::string refused = precision_refusal(run_.train.precision, device_); !refused.empty()) throw UserError(refused);
  record_.provenance["precision"] = precision_provenance(run_.train.precision, device_);
  CpuMemoryCounter::clear_budget_hit();
  flops_ = model->flops ? model->flops(run_.model_options(), run_.task_info) : std::nan("");
  model_entry_ = model;
  build_from_scratch(*model);
}

// `stoppable`: a stop ends it between batches. Member 0 of a group evaluates alone and
// is not stoppable: the group agrees on a stop at the next step boundary instead.
void RunExecution::evaluate(bool stoppable) {
  model_->eval();
  at::NoGradGuard no_grad;
  const auto& eval = data_->eval;
  const std::int64_t n = eval.size();
  const std::int64_t batch = run_.train.batch_size;
  std::vector<at::Tensor> logits;
  for (std::int64_t start = 0; start < n; start += batch) {
    if (stoppable && stop_requested()) throw StopRequested{};
    const std::int64_t len = std::min(batch, n - start);
    const WatchedCall watched = watch(fmt::format("the evaluation at step {}", state_.step));
    logits.push_back(forward_in_precision(eval.x.narrow(0, start, len).to(device_)).to(at::kCPU, at::kFloat));
  }
  const at::Tensor all = at::cat(logits);
  const auto& info = run_.task_info;
  // Fails the run, as a non-finite training loss does: metrics of NaN logits are no result.
  if (const std::string bad = non_finite_logits_problem(all); !bad.empty())
    throw std::runtime_error("non-finite evaluation output: " + bad);
  const double loss = loss_of(all, eval.y, info.multilabel).item<double>();
  if (!std::isfinite(loss)) throw std::runtime_error(fmt::format("non-finite evaluation loss ({})", loss));
  auto& c = state_.curves;
  c["eval_step"].push_back(static_cast<double>(state_.step));
  c["eval_loss"].push_back(loss);
  for (const auto& m : info.metrics) c[FigureKey::task_metric(m).stored()].push_back(compute_metric(m, all, eval.y));
  state_.last_eval_step = state_.step;
  model_->train();
}

// The trained weights again under each [[variant]] (variant_eval.h); a stop between
// batches checkpoints the finished training, so the variants run again on resume.
void RunExecution::evaluate_variants_of_run() {
  const VariantEvalInput in{run_.spec.at("evaluate"), data_->eval, run_.task_info,
                            run_.train.batch_size, device_,
                            [] {
                              if (stop_requested()) throw StopRequested{};
                            }};
  RunRecord out;
  {
    const AutocastScope autocast(run_.train.precision, device_);
    evaluate_variants(*model_, in, out);
  }
  for (const auto& [name, value] : out.metrics) record_.metrics[name] = value;
  for (auto& [name, values] : out.curves) state_.curves[name] = std::move(values);  // finish_record copies them
  record_.records["variants"] = out.records.at("variants");
  record_.records["probes"] = out.records.at("probes");
}

void RunExecution::finish_record(const RunOutcome& out, std::chrono::steady_clock::time_point wall_start) {
  record_.status = out.status;
  record_.error = out.error;
  record_.curves = state_.curves;
  auto& m = record_.metrics;
  RunFacts facts;
  facts.finished = out.status == RunStatus::Ok;
  facts.task_metrics = run_.task_info.metrics;
  facts.batch_size = static_cast<double>(run_.train.batch_size);
  facts.tokens_per_sample = static_cast<double>(run_.task_info.tokens());
  facts.flops_per_sample = flops_;
  facts.peak_flops_per_s = ctx_.peak_flops_per_s;
  facts.devices = in_group() ? ctx_.group->size() : 1;
  facts.steps_done = static_cast<double>(state_.step);
  if (const auto& t = run_.train.target) facts.target = TargetFacts{t->metric, t->value, figure_direction(t->metric) != Direction::Lower};
  for (auto& [name, value] : figures_from_curves(state_.curves, facts)) m[name] = value;
  m["steps_done"] = static_cast<double>(state_.step);
  // The chance level of accuracy: what always answering the commonest class scores.
  if (data_ && !run_.task_info.multilabel && data_->eval.size() > 0) m["eval_chance"] = majority_class_share(data_->eval.y);
  if (model_) {
    double params = 0;
    for (const auto& p : model_->parameters()) params += static_cast<double>(p.numel());
    m["params"] = params;
    record_.records["model"] = model_->records();
    if (const nlohmann::json from = model_->provenance(); !from.empty()) record_.provenance["model"] = from;
  }
  m["flops_per_sample"] = flops_;
  m["peak_bytes"] = static_cast<double>(state_.peak_bytes);
  if (const std::int64_t device_peak = device_peak_bytes(device_); device_peak >= 0 && !m.count("device_peak_bytes"))
    m["device_peak_bytes"] = static_cast<double>(device_peak);
  m["peak_step_bytes"] = static_cast<double>(state_.peak_step_bytes);
  m["data_bytes"] = static_cast<double>(data_bytes_);
  if (!m.count("memory_budget_bytes")) m["memory_budget_bytes"] = static_cast<double>(run_.train.memory_budget);
  m["wall_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  record_.provenance["attempt"] = state_.attempt;
  record_.provenance["finished_at"] = utc_now_iso();
}

WatchedCall RunExecution::watch(const std::string& what) {
  return WatchedCall(what, [this](bool stopped, const std::string& why) {
    RunOutcome out;
    out.status = stopped ? RunStatus::Stopped : RunStatus::Failed;
    out.error = stopped ? fmt::format("stopped by signal {} at step {}: {}; run the same command again to resume it from its "
                                      "last checkpoint",
                                      stop_signal(), state_.step, why)
                        : fmt::format("{} at step {}", why, state_.step);
    finish_record(out, wall_start_);
    if (ctx_.publish && writes_files()) {
      fs::create_directories(folder().runs());
      write_run_file(folder().run_file(run_.key), record_);
    }
    fmt::print(stderr, "lrbench: run {} {}: {}\nlrbench: run the same command again to go on with the other runs\n",
               run_.key.substr(0, 12), stopped ? "stopped" : "failed", out.error);
    return kExitStopped;
  });
}

RunOutcome execute_run(const RunSpec& run, const RunContext& ctx) {
  RunOutcome out = RunExecution(run, ctx).execute();
  // The run's tensors are gone: hand the device's cache back and lift the run's cap, so
  // the next run starts from an empty device (and an out-of-memory run leaves no debris).
  if (run.device() == "cuda") {
    const at::Device device(at::kCUDA, static_cast<c10::DeviceIndex>(ctx.device_index));
    set_device_memory_limit(device, 0);
    release_device_cache(device);
  }
  return out;
}

}  // namespace lrb
