#include "suite/run/runner.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <torch/autograd.h>
#include <torch/types.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/core.h>

#include "suite/core/environment.h"
#include "suite/core/errors.h"
#include "suite/core/seeds.h"
#include "suite/core/stop_flag.h"
#include "suite/mpi/run_group.h"
#include "suite/registry/registry.h"
#include "suite/run/checkpoint.h"
#include "suite/run/data_cache.h"
#include "suite/run/gradient_exchange.h"
#include "suite/contracts/metrics.h"
#include "suite/contracts/model.h"
#include "suite/run/variant_eval.h"
#include "suite/runtime/counting_allocator.h"
#include "suite/run/matmul_peak.h"
#include "suite/run/step_phases.h"
#include "suite/runtime/cuda_device.h"
#include "suite/runtime/device_memory.h"
#include "suite/stats/sample_stats.h"
#include "suite/store/results_folder.h"
#include "suite/store/results_layout.h"
#include "suite/store/run_file.h"

namespace lrb {

namespace fs = std::filesystem;

double learning_rate_at(const TrainSettings& train, std::int64_t step) {
  const double lr = train.lr;
  const std::int64_t steps = train.steps;
  const std::int64_t warmup = train.warmup_steps;
  if (step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const double span = static_cast<double>(std::max<std::int64_t>(1, steps - warmup));
  const double p = std::min(1.0, static_cast<double>(step - warmup) / span);
  const std::string& schedule = train.schedule;
  if (schedule == "cosine") return lr * 0.5 * (1.0 + std::cos(M_PI * p));
  if (schedule == "linear") return lr * (1.0 - p);
  return lr;
}

namespace {

// Thrown inside the loop when a stop was requested; caught to checkpoint.
struct StopRequested {};

std::unique_ptr<torch::optim::Optimizer> make_optimizer(Model& model, const TrainSettings& train) {
  // Weight decay on matrices only: biases, norms and embeddings' scalars are not decayed.
  std::vector<at::Tensor> decay, no_decay;
  for (auto& p : model.parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  const double lr = train.lr, wd = train.weight_decay;
  if (train.optimizer == "adamw") {
    using torch::optim::AdamWOptions;
    const double b1 = train.beta1, b2 = train.beta2;
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(decay, std::make_unique<AdamWOptions>(AdamWOptions(lr).betas({b1, b2}).weight_decay(wd)));
    groups.emplace_back(no_decay, std::make_unique<AdamWOptions>(AdamWOptions(lr).betas({b1, b2}).weight_decay(0.0)));
    return std::make_unique<torch::optim::AdamW>(std::move(groups), AdamWOptions(lr));
  }
  using torch::optim::SGDOptions;
  const double m = train.momentum;
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<SGDOptions>(SGDOptions(lr).momentum(m).weight_decay(wd)));
  groups.emplace_back(no_decay, std::make_unique<SGDOptions>(SGDOptions(lr).momentum(m).weight_decay(0.0)));
  return std::make_unique<torch::optim::SGD>(std::move(groups), SGDOptions(lr));
}

at::Tensor loss_of(const at::Tensor& logits, const at::Tensor& y, bool multilabel) {
  if (multilabel) return at::binary_cross_entropy_with_logits(logits, y.to(logits.scalar_type()));
  return at::cross_entropy_loss(logits, y);
}

std::string error_text(const std::exception& e) {
  if (auto* c10e = dynamic_cast<const c10::Error*>(&e)) return c10e->what_without_backtrace();
  return e.what();
}

class RunExecution {
 public:
  RunExecution(const RunSpec& run, const RunContext& ctx) : run_(run), ctx_(ctx) {}

  RunOutcome execute() {
    const auto wall_start = std::chrono::steady_clock::now();
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

 private:
  void prepare() {
    const TaskEntry* task = TaskRegistry::instance().find(run_.task_name());
    const ModelEntry* model = ModelRegistry::instance().find(run_.model_name());
    LRB_CHECK(task && model, "run names an unregistered task or model");
    const std::uint64_t base = run_.base_seed();
    const auto s = static_cast<std::uint64_t>(run_.seed_index());
    CachedTaskData loaded = cached_task_data(
        *task, run_.task_options(), run_.seq_len(), run_.task_info,
        DataRequest{derive_seed(base, s, kStreamData), run_.train.eval_size}, ctx_.data_cache);
    data_ = std::move(loaded.data);
    record_.provenance["data_cache"] = loaded.source.to_json();
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
    CpuMemoryCounter::clear_budget_hit();
    flops_ = model->flops ? model->flops(run_.model_options(), run_.task_info) : std::nan("");
    model_entry_ = model;
    build_from_scratch(*model);
  }

  ResultsLayout folder() const { return ResultsLayout(ctx_.results_dir); }
  bool in_group() const { return ctx_.group != nullptr && ctx_.group->size() > 1; }
  // Member 0 of a group (or a rank alone) writes the run file and the checkpoints.
  bool writes_files() const { return !in_group() || ctx_.group->rank() == 0; }

  // Collective: when any member's text is not empty, every member throws it (the first).
  void fail_if_any_member_failed(const std::string& why) {
    const auto texts = ctx_.group->gather_text(why);
    for (std::size_t m = 0; m < texts.size(); ++m)
      if (!texts[m].empty())
        throw std::runtime_error(fmt::format("member {} of the run's {}-rank group failed: {}", m, ctx_.group->size(), texts[m]));
  }

  // Continues from the run's checkpoint when one exists and can be used. The members of a
  // group each read it and agree: all resume from it, or all start from step 0.
  void resume_from_checkpoint() {
    if (!ctx_.publish || measuring()) return;
    const fs::path ckpt = folder().checkpoint(run_.key);
    const bool present = fs::exists(ckpt);
    std::string bad;
    if (present) {
      try {
        load_checkpoint(ckpt, run_.key, *model_, *optimizer_, state_);
      } catch (const BadCheckpoint& e) {
        bad = e.what();
      }
    }
    bool usable = present && bad.empty();
    if (in_group()) {
      const int mine = !present ? 0 : bad.empty() ? 1 : 2;
      const int highest = ctx_.group->max(mine), lowest = -ctx_.group->max(-mine);
      if (usable && (lowest != 1 || highest != 1)) {
        usable = false;
        record_.provenance["checkpoint_discarded"] = {{"file", ckpt.string()},
                                                      {"reason", "not every member of the run's group could use it"}};
      }
    }
    if (!bad.empty() && writes_files()) discard_checkpoint(ckpt, bad);
    if (!usable) {
      if (present) build_from_scratch(*model_entry_);  // the load may have changed part of the model
      return;
    }
    state_.attempt += 1;
    record_.provenance["resumed_from_step"] = state_.step;
    if (state_.threads != ctx_.threads)
      record_.provenance["warning"] = fmt::format(
          "resumed with {} threads after starting with {}: the result is not bit-identical to an uninterrupted run",
          ctx_.threads, state_.threads);
  }

  // Model, optimizer and training state as a run starts them: every random stream from the
  // run's seeds. Memory is counted from here (model, optimizer, activations, evaluation).
  void build_from_scratch(const ModelEntry& model) {
    const std::uint64_t base = run_.base_seed();
    const auto s = static_cast<std::uint64_t>(run_.seed_index());
    optimizer_.reset();
    model_.reset();
    CpuMemoryCounter::begin_scope();
    state_ = TrainState{};
    torch::manual_seed(derive_seed(base, s, kStreamInit));
    model_ = model.make(run_.model_options(), run_.task_info);
    model_->to(device_);
    reset_device_peak(device_);
    optimizer_ = make_optimizer(*model_, run_.train);
    Rng order(derive_seed(base, s, kStreamOrder));
    for (int i = 0; i < 4; ++i) state_.order_rng[i] = order.state()[i];
    state_.threads = ctx_.threads;
    torch::manual_seed(derive_seed(base, s, kStreamDropout));
  }

  // A checkpoint that cannot be used is moved aside with its reason (DIR/quarantine/) and
  // the run starts again from step 0: a resumed run must be the run never stopped, or none.
  void discard_checkpoint(const fs::path& ckpt, const std::string& reason) {
    nlohmann::json note = {{"file", ckpt.string()}, {"reason", reason}};
    try {
      note["moved_to"] = quarantine_bad_file(ctx_.results_dir, ckpt, "checkpoint: " + reason).string();
    } catch (const std::exception& e) {
      std::error_code ec;
      fs::remove(ckpt, ec);
      note["move_failed"] = e.what();
    }
    record_.provenance["checkpoint_discarded"] = note;
    fmt::print(stderr, "lrbench: the checkpoint {} cannot be used ({}); set aside, the run restarts from step 0\n",
               ckpt.string(), reason);
  }

  std::vector<std::int64_t> next_batch(std::int64_t batch) {
    const std::int64_t n = data_->train.size();
    std::vector<std::int64_t> idx;
    idx.reserve(static_cast<std::size_t>(batch));
    Rng rng(0);
    rng.set_state(state_.order_rng);
    while (static_cast<std::int64_t>(idx.size()) < batch) {
      if (state_.order.empty() || state_.position >= n) {
        state_.order.resize(static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i) state_.order[static_cast<std::size_t>(i)] = i;
        for (std::int64_t i = n - 1; i > 0; --i)
          std::swap(state_.order[static_cast<std::size_t>(i)],
                    state_.order[rng.below(static_cast<std::uint64_t>(i) + 1)]);
        state_.position = 0;
        ++state_.epoch;
      }
      idx.push_back(state_.order[static_cast<std::size_t>(state_.position++)]);
    }
    for (int i = 0; i < 4; ++i) state_.order_rng[i] = rng.state()[i];
    return idx;
  }

  // `stoppable`: a stop ends it between batches. Member 0 of a group evaluates alone and
  // is not stoppable: the group agrees on a stop at the next step boundary instead.
  void evaluate(bool stoppable = true) {
    model_->eval();
    at::NoGradGuard no_grad;
    const auto& eval = data_->eval;
    const std::int64_t n = eval.size();
    const std::int64_t batch = run_.train.batch_size;
    std::vector<at::Tensor> logits;
    for (std::int64_t start = 0; start < n; start += batch) {
      if (stoppable && stop_requested()) throw StopRequested{};
      const std::int64_t len = std::min(batch, n - start);
      logits.push_back(model_->forward(eval.x.narrow(0, start, len).to(device_)).to(at::kCPU));
    }
    const at::Tensor all = at::cat(logits);
    const auto& info = run_.task_info;
    auto& c = state_.curves;
    c["eval_step"].push_back(static_cast<double>(state_.step));
    c["eval_loss"].push_back(loss_of(all, eval.y, info.multilabel).item<double>());
    for (const auto& m : info.metrics) c["eval_" + m].push_back(compute_metric(m, all, eval.y));
    state_.last_eval_step = state_.step;
    model_->train();
  }

  // The trained weights again under each [[variant]] (variant_eval.h); a stop between
  // batches checkpoints the finished training, so the variants run again on resume.
  void evaluate_variants_of_run() {
    const VariantEvalInput in{run_.spec.at("evaluate"), data_->eval, run_.task_info,
                              run_.train.batch_size, device_,
                              [] {
                                if (stop_requested()) throw StopRequested{};
                              }};
    RunRecord out;
    evaluate_variants(*model_, in, out);
    for (const auto& [name, value] : out.metrics) record_.metrics[name] = value;
    for (auto& [name, values] : out.curves) state_.curves[name] = std::move(values);  // finish_record copies them
    record_.records["variants"] = out.records.at("variants");
    record_.records["probes"] = out.records.at("probes");
  }

  struct StepResult {
    double loss = 0, seconds = 0;
    std::int64_t peak_bytes = 0;  // the step's own peak above what was live before it
    StepPhases phases;            // where `seconds` went
  };

  bool measuring() const { return run_.measure.has_value(); }

  // One value per step in each phase's curve (step_data_seconds, ...), beside step_seconds.
  void record_phases(const StepPhases& p) {
    const double values[] = {p.data, p.forward, p.backward, p.optimizer, p.other};
    for (std::size_t i = 0; i < std::size(kStepPhaseCurves); ++i) state_.curves[kStepPhaseCurves[i]].push_back(values[i]);
  }

  // One optimizer step on the samples `idx` (repeated cyclically by the caller when a
  // measurement asks for more than the data holds). Tracks the run's memory peaks.
  // On a GPU the clock is read only once the device has finished what came before (and,
  // at the end, the step itself): kernels launch asynchronously.
  StepResult train_step(const std::vector<std::int64_t>& idx, double lr) {
    synchronize_device(device_);
    const auto t0 = std::chrono::steady_clock::now();
    const std::int64_t live_before = run_live_bytes(device_);
    const std::int64_t peak_before = run_peak_bytes(device_);
    run_reset_peak(device_);
    for (auto& g : optimizer_->param_groups()) g.options().set_lr(lr);
    StepResult r;
    PhaseClock clock(device_);
    if (in_group()) {
      step_in_group(idx, r, clock);
    } else {
      optimizer_->zero_grad();
      r.phases.optimizer = clock.lap();
      const at::Tensor index = at::tensor(at::ArrayRef<std::int64_t>(idx), at::kLong);
      const at::Tensor x = data_->train.x.index_select(0, index).to(device_);
      const at::Tensor y = data_->train.y.index_select(0, index).to(device_);
      r.phases.data = clock.lap();
      const at::Tensor loss = loss_of(model_->forward(x), y, run_.task_info.multilabel);
      r.loss = loss.item<double>();
      r.phases.forward = clock.lap();
      if (std::isfinite(r.loss)) {
        loss.backward();
        r.phases.backward = clock.lap();
        const double clip = run_.train.grad_clip;
        if (clip > 0) torch::nn::utils::clip_grad_norm_(model_->parameters(), clip);
        optimizer_->step();
        r.phases.optimizer += clock.lap();
      }
    }
    synchronize_device(device_);
    r.peak_bytes = run_peak_bytes(device_) - live_before;
    run_reset_peak(device_);
    state_.peak_bytes = std::max({state_.peak_bytes, peak_before, r.peak_bytes + live_before});
    state_.peak_step_bytes = std::max(state_.peak_step_bytes, r.peak_bytes);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.phases.other = r.seconds - r.phases.timed();
    return r;
  }

  // A data-parallel step: this member's slice of the global batch `idx` (contiguous, sizes
  // differing by at most one), its loss scaled by the slice's share so that the group's
  // summed gradient is the global batch's mean gradient, the exchange, then the same
  // clipping and optimizer step on every member. Dropout draws from a stream per step and
  // member, so that a resumed run draws what an uninterrupted one would.
  void step_in_group(const std::vector<std::int64_t>& idx, StepResult& r, PhaseClock& clock) {
    const int member = ctx_.group->rank(), members = ctx_.group->size();
    const auto total = static_cast<std::int64_t>(idx.size());
    const std::int64_t begin = total * member / members, end = total * (member + 1) / members;
    torch::manual_seed(derive_seed(run_.base_seed(), static_cast<std::uint64_t>(run_.seed_index()),
                                   fmt::format("{}/step-{}/member-{}", kStreamDropout, state_.step, member)));
    double share = 0;
    std::string error;
    try {
      optimizer_->zero_grad();
      r.phases.optimizer = clock.lap();
      const std::vector<std::int64_t> mine(idx.begin() + begin, idx.begin() + end);
      const at::Tensor index = at::tensor(at::ArrayRef<std::int64_t>(mine), at::kLong);
      const at::Tensor x = data_->train.x.index_select(0, index).to(device_);
      const at::Tensor y = data_->train.y.index_select(0, index).to(device_);
      r.phases.data = clock.lap();
      const at::Tensor loss =
          loss_of(model_->forward(x), y, run_.task_info.multilabel) * (static_cast<double>(end - begin) / static_cast<double>(total));
      share = loss.item<double>();
      r.phases.forward = clock.lap();
      if (std::isfinite(share)) loss.backward();
      r.phases.backward = clock.lap();
    } catch (const std::exception& e) {
      error = CpuMemoryCounter::budget_hit() ? "memory budget exceeded: " + error_text(e) : error_text(e);
    }
    clock.lap();  // a failure's time is the step's "other"
    const ExchangeResult ex = exchange_gradients(*ctx_.group, model_->parameters(), share, error);
    r.phases.exchange = clock.lap();
    state_.curves["allreduce_seconds"].push_back(r.phases.exchange);
    if (ex.failed) throw std::runtime_error(ex.error);
    r.loss = ex.loss;
    if (std::isfinite(r.loss)) {
      const double clip = run_.train.grad_clip;
      if (clip > 0) torch::nn::utils::clip_grad_norm_(model_->parameters(), clip);
      optimizer_->step();
      r.phases.optimizer += clock.lap();
    }
  }

  // A periodic checkpoint only shortens a resume: one that cannot be written (a full disk,
  // a folder gone read-only) is said once and training goes on. Failing the run for it
  // would record an environment's failure as the run's result, and the sweep would not
  // run it again once there is room.
  void save_periodic_checkpoint() {
    try {
      save_checkpoint(folder().checkpoint(run_.key), run_.key, *model_, *optimizer_, state_);
    } catch (const std::exception& e) {
      if (record_.provenance.contains("checkpoint_failed")) return;
      record_.provenance["checkpoint_failed"] = {{"step", state_.step}, {"reason", error_text(e)}};
      fmt::print(stderr, "lrbench: run {}: a periodic checkpoint could not be written at step {} ({}); training goes on without it\n",
                 run_.key.substr(0, 12), state_.step, error_text(e));
    }
  }

  // Collective, at each step boundary of a group: every member learns whether one was
  // asked to stop or failed since the last boundary, so that all stop at the same step.
  void agree_at_boundary() {
    const int mine = !pending_error_.empty() ? 2 : stop_requested() ? 1 : 0;
    const int code = ctx_.group->max(mine);
    if (code == 2) {
      const std::string why = pending_error_;
      pending_error_.clear();
      fail_if_any_member_failed(why);
    }
    if (code == 1 && state_.step < run_.train.steps) throw StopRequested{};
  }

  std::vector<std::int64_t> cyclic_batch(std::int64_t batch) const {
    std::vector<std::int64_t> idx(static_cast<std::size_t>(batch));
    for (std::int64_t i = 0; i < batch; ++i) idx[static_cast<std::size_t>(i)] = i % data_->train.size();
    return idx;
  }

  // [measure]: peak memory and step time at [train] batch_size (one warm-up step, then
  // `steps` timed ones), then the largest batch whose step fits the budget: doubling until
  // a step is refused, then bisection. The budget covers everything the run allocates
  // beyond its data (parameters, gradients, optimizer state, activations).
  void measure() {
    const MeasureSettings& m = *run_.measure;
    const std::int64_t batch = run_.train.batch_size;
    const double lr = run_.train.lr;
    model_->train();
    auto& c = state_.curves;
    train_step(cyclic_batch(batch), lr);  // warm-up: optimizer state, allocator caches
    state_.peak_bytes = state_.peak_step_bytes = 0;
    reset_device_peak(device_);
    model_->reset_figures();
    for (std::int64_t i = 0; i < m.steps; ++i) {
      if (stop_requested()) throw StopRequested{};
      const StepResult r = train_step(cyclic_batch(batch), lr);
      c["step_seconds"].push_back(r.seconds);
      c["step_peak_bytes"].push_back(static_cast<double>(r.peak_bytes));
      record_phases(r.phases);
      ++state_.step;
    }
    const TrainState at_batch = state_;  // the probes below must not change these figures
    for (const auto& [name, value] : model_->figures()) record_.metrics[name] = value;
    if (const std::int64_t device_peak = device_peak_bytes(device_); device_peak >= 0)
      record_.metrics["device_peak_bytes"] = static_cast<double>(device_peak);
    const std::int64_t budget = m.budget;
    if (budget > 0) {
      const std::int64_t max_batch = m.max_batch;
      auto fits = [&](std::int64_t b) {
        if (stop_requested()) throw StopRequested{};
        CpuMemoryCounter::set_limit(budget);
        set_device_memory_limit(device_, budget);
        bool ok = true;
        try {
          train_step(cyclic_batch(b), lr);
        } catch (const std::exception& e) {
          // The budget (CPU) or the accelerator's own limit; anything else is a real failure.
          if (!CpuMemoryCounter::budget_hit() && !is_device_out_of_memory(e)) throw;
          ok = false;
          release_device_cache(device_);
        }
        CpuMemoryCounter::set_limit(0);
        CpuMemoryCounter::clear_budget_hit();
        CpuMemoryCounter::release_free_memory();
        set_device_memory_limit(device_, 0);
        release_device_cache(device_);
        c["probe_batch"].push_back(static_cast<double>(b));
        c["probe_fits"].push_back(ok ? 1.0 : 0.0);
        return ok;
      };
      std::int64_t lo = 0, hi = max_batch + 1;
      for (std::int64_t b = 1; b <= max_batch; b *= 2) {
        if (!fits(b)) {
          hi = b;
          break;
        }
        lo = b;
      }
      while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        (fits(mid) ? lo : hi) = mid;
      }
      record_.metrics["max_batch_in_budget"] = static_cast<double>(lo);
      record_.metrics["memory_budget_bytes"] = static_cast<double>(budget);
    }
    const auto curves = std::move(state_.curves);
    state_ = at_batch;
    state_.curves = curves;
  }

  void train_and_evaluate() {
    const TrainSettings& train = run_.train;
    const std::int64_t steps = train.steps;
    const std::int64_t batch = train.batch_size;
    const std::int64_t eval_every = train.eval_every;
    model_->train();
    auto& c = state_.curves;
    for (const char* name : {"train_step", "train_loss", "lr", "step_seconds", "step_peak_bytes"}) c[name];
    for (const char* name : kStepPhaseCurves) c[name];
    while (true) {
      const bool eval_due = state_.step == steps || (eval_every > 0 && state_.step > 0 && state_.step % eval_every == 0);
      if (eval_due && state_.last_eval_step != state_.step) {
        if (!in_group()) {
          evaluate();
        } else if (writes_files()) {
          // The replicas are identical: member 0 evaluates for the group, the others wait.
          try {
            evaluate(/*stoppable=*/false);
          } catch (const std::exception& e) {
            pending_error_ = "evaluation: " + error_text(e);
          }
        } else {
          state_.last_eval_step = state_.step;
        }
      }
      if (in_group()) agree_at_boundary();
      if (state_.step >= steps) break;
      if (stop_requested() && !in_group()) throw StopRequested{};

      const double lr = learning_rate_at(train, state_.step);
      const StepResult r = train_step(next_batch(batch), lr);
      if (!std::isfinite(r.loss)) throw std::runtime_error(fmt::format("non-finite training loss ({})", r.loss));
      const double loss_value = r.loss, secs = r.seconds;
      const std::int64_t step_peak = r.peak_bytes;

      ++state_.step;
      c["train_step"].push_back(static_cast<double>(state_.step));
      c["train_loss"].push_back(loss_value);
      c["lr"].push_back(lr);
      c["step_seconds"].push_back(secs);
      c["step_peak_bytes"].push_back(static_cast<double>(step_peak));
      record_phases(r.phases);
      if (ctx_.checkpoint_every > 0 && ctx_.publish && writes_files() && state_.step % ctx_.checkpoint_every == 0 &&
          state_.step < steps)
        save_periodic_checkpoint();
    }
    if (in_group())
      if (const std::string differ = replicas_differ(*ctx_.group, model_->parameters()); !differ.empty())
        throw std::runtime_error(differ);
    state_.peak_bytes = std::max(state_.peak_bytes, run_peak_bytes(device_));
  }

  void finish_record(const RunOutcome& out, std::chrono::steady_clock::time_point wall_start) {
    record_.status = out.status;
    record_.error = out.error;
    record_.curves = state_.curves;
    auto& m = record_.metrics;
    const auto& c = state_.curves;
    auto last = [&](const std::string& name) {
      auto it = c.find(name);
      return it == c.end() || it->second.empty() ? std::nan("") : it->second.back();
    };
    if (out.status == RunStatus::Ok && c.count("eval_loss")) {
      m["eval_loss"] = last("eval_loss");
      for (const auto& name : run_.task_info.metrics) m["eval_" + name] = last("eval_" + name);
    }
    if (auto it = c.find("train_loss"); it != c.end() && !it->second.empty()) {
      const auto& v = it->second;
      const std::size_t k = std::min<std::size_t>(10, v.size());
      double sum = 0;
      for (std::size_t i = v.size() - k; i < v.size(); ++i) sum += v[i];
      m["train_loss"] = sum / static_cast<double>(k);
    }
    m["steps_done"] = static_cast<double>(state_.step);
    // The chance level of accuracy: what always answering the commonest class scores.
    if (data_ && !run_.task_info.multilabel && data_->eval.size() > 0) m["eval_chance"] = majority_class_share(data_->eval.y);
    if (model_) {
      double params = 0;
      for (const auto& p : model_->parameters()) params += static_cast<double>(p.numel());
      m["params"] = params;
      record_.records["model"] = model_->records();
    }
    m["flops_per_sample"] = flops_;
    if (auto it = c.find("step_seconds"); it != c.end() && !it->second.empty()) {
      // Throughput after warm-up: the first steps pay for allocation and caches.
      const auto& v = it->second;
      const std::size_t warm = std::min<std::size_t>(5, v.size() / 2);
      std::vector<double> steady(v.begin() + static_cast<std::ptrdiff_t>(warm), v.end());
      const double med = stats::quantile(steady, 0.5);
      const auto batch = static_cast<double>(run_.train.batch_size);
      m["step_seconds_median"] = med;
      m["step_seconds_p95"] = stats::quantile(steady, 0.95);
      m["samples_per_s"] = batch / med;
      m["tokens_per_s"] = batch * static_cast<double>(run_.task_info.tokens()) / med;
      // Model FLOP utilisation: the model's own count of a step's FLOPs over the step time,
      // and that over the measured peak of the devices that trained it.
      if (const double achieved = training_step_flops(flops_, batch) / med; std::isfinite(achieved)) {
        m["model_flops_per_s"] = achieved;
        const double utilisation = flop_utilisation(achieved, ctx_.peak_flops_per_s, in_group() ? ctx_.group->size() : 1);
        if (std::isfinite(utilisation)) m["flop_utilisation"] = utilisation;
      }
      // Where the step goes: each phase's median over the same steps (the gradient exchange
      // of a data-parallel step is allreduce_seconds_median below).
      for (const char* name : kStepPhaseCurves)
        if (auto phase = c.find(name); phase != c.end() && phase->second.size() == v.size())
          m[std::string(name) + "_median"] =
              stats::quantile(std::vector<double>(phase->second.begin() + static_cast<std::ptrdiff_t>(warm), phase->second.end()), 0.5);
      // Data parallelism: what the gradient exchange costs, alone and as a share of a step.
      if (auto ar = c.find("allreduce_seconds"); ar != c.end() && ar->second.size() == v.size()) {
        const std::vector<double> exchange(ar->second.begin() + static_cast<std::ptrdiff_t>(warm), ar->second.end());
        m["allreduce_seconds_median"] = stats::quantile(exchange, 0.5);
        std::vector<double> share(exchange.size());
        for (std::size_t i = 0; i < share.size(); ++i) share[i] = exchange[i] / steady[i];
        m["allreduce_share"] = stats::quantile(share, 0.5);
      }
    }
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

  const RunSpec& run_;
  const RunContext& ctx_;
  const ModelEntry* model_entry_ = nullptr;
  std::string pending_error_;  // member 0's evaluation failure, told to the group at the next boundary
  RunRecord record_;
  TrainState state_;
  std::shared_ptr<const TaskData> data_;
  std::shared_ptr<Model> model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  at::Device device_{at::kCPU};
  std::int64_t data_bytes_ = 0;
  double flops_ = std::nan("");
};

}  // namespace

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
