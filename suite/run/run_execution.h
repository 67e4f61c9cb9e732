#pragma once
// One run's execution, one concern per file (private to suite/run):
//   runner.cpp          the procedure: prepare, resume, train or measure, evaluate, record, publish
//   run_checkpoints.cpp the run's state from its seeds or its checkpoint, and periodic checkpoints
//   training_loop.cpp   the training loop: batches in the seeded order, one step, its phases
//   group_step.cpp      a data-parallel step and the group's agreements at step boundaries
//   memory_probe.cpp    [measure]: peak memory and step time, the largest batch in a budget
//   derived_figures.h   the figures that follow from the curves (a pure function, no LibTorch)
#include <ATen/Device.h>
#include <ATen/Tensor.h>
#include <torch/optim/optimizer.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "suite/core/call_watch.h"
#include "suite/contracts/model.h"
#include "suite/contracts/task.h"
#include "suite/mpi/run_group.h"
#include "suite/registry/registry.h"
#include "suite/run/runner.h"
#include "suite/run/step_phases.h"
#include "suite/run/train_state.h"
#include "suite/store/results_layout.h"

namespace lrb {

class RunExecution {
 public:
  RunExecution(const RunSpec& run, const RunContext& ctx) : run_(run), ctx_(ctx) {}

  RunOutcome execute();

  // Thrown inside the loop when a stop was requested; caught to checkpoint.
  struct StopRequested {};
  // The task's loss (cross-entropy, or binary cross-entropy per label for a multilabel task).
  static at::Tensor loss_of(const at::Tensor& logits, const at::Tensor& y, bool multilabel);
  // An exception's text, without LibTorch's backtrace.
  static std::string error_text(const std::exception& e);

 private:
  struct StepResult {
    double loss = 0, seconds = 0;
    std::int64_t peak_bytes = 0;  // the step's own peak above what was live before it
    StepPhases phases;            // where `seconds` went
  };

  // The procedure (runner.cpp).
  void prepare();
  ResultsLayout folder() const { return ResultsLayout(ctx_.results_dir); }
  bool in_group() const { return ctx_.group != nullptr && ctx_.group->size() > 1; }
  // Member 0 of a group (or a rank alone) writes the run file and the checkpoints.
  bool writes_files() const { return !in_group() || ctx_.group->rank() == 0; }
  bool measuring() const { return run_.measure.has_value(); }
  // `stoppable`: a stop ends it between batches. Member 0 of a group evaluates alone and
  // is not stoppable: the group agrees on a stop at the next step boundary instead.
  void evaluate(bool stoppable = true);
  // The trained weights again under each [[variant]] (variant_eval.h); a stop between
  // batches checkpoints the finished training, so the variants run again on resume.
  void evaluate_variants_of_run();
  void finish_record(const RunOutcome& out, std::chrono::steady_clock::time_point wall_start);
  // Watches a call into the model (suite/core/call_watch.h). Stuck past a stop's grace, the
  // run is recorded stopped (resumed from its last checkpoint); past step_time_limit, failed
  // with the reason. Either way the record is published and the process ends with exit 3.
  WatchedCall watch(const std::string& what);
  std::chrono::steady_clock::time_point wall_start_;

  // The run's state (run_checkpoints.cpp).
  // Continues from the run's checkpoint when one exists and can be used. The members of a
  // group each read it and agree: all resume from it, or all start from step 0.
  void resume_from_checkpoint();
  // Model, optimizer and training state as a run starts them: every random stream from the
  // run's seeds. Memory is counted from here (model, optimizer, activations, evaluation).
  void build_from_scratch(const ModelEntry& model);
  // A checkpoint that cannot be used is moved aside with its reason (DIR/quarantine/) and
  // the run starts again from step 0: a resumed run must be the run never stopped, or none.
  void discard_checkpoint(const std::filesystem::path& ckpt, const std::string& reason);
  // A periodic checkpoint only shortens a resume: one that cannot be written (a full disk,
  // a folder gone read-only) is said once and training goes on. Failing the run for it
  // would record an environment's failure as the run's result, and the sweep would not
  // run it again once there is room.
  void save_periodic_checkpoint();

  // The training loop (training_loop.cpp).
  void train_and_evaluate();
  std::vector<std::int64_t> next_batch(std::int64_t batch);
  // One optimizer step on the samples `idx` (repeated cyclically by the caller when a
  // measurement asks for more than the data holds). Tracks the run's memory peaks.
  // On a GPU the clock is read only once the device has finished what came before (and,
  // at the end, the step itself): kernels launch asynchronously.
  StepResult train_step(const std::vector<std::int64_t>& idx, double lr);
  at::Tensor forward_in_precision(const at::Tensor& x);
  // One value per step in each phase's curve (step_data_seconds, ...), beside step_seconds.
  void record_phases(const StepPhases& p);

  // Data parallelism (group_step.cpp).
  // A data-parallel step: this member's slice of the global batch `idx` (contiguous, sizes
  // differing by at most one), its loss scaled by the slice's share so that the group's
  // summed gradient is the global batch's mean gradient, the exchange, then the same
  // clipping and optimizer step on every member. Dropout draws from a stream per step and
  // member, so that a resumed run draws what an uninterrupted one would.
  void step_in_group(const std::vector<std::int64_t>& idx, StepResult& r, PhaseClock& clock);
  // Collective, at each step boundary of a group: every member learns whether one was
  // asked to stop or failed since the last boundary, so that all stop at the same step.
  void agree_at_boundary();
  // Collective: when any member's text is not empty, every member throws it (the first).
  void fail_if_any_member_failed(const std::string& why);

  // [measure] (memory_probe.cpp).
  // [measure]: peak memory and step time at [train] batch_size (one warm-up step, then
  // `steps` timed ones), then the largest batch whose step fits the budget: doubling until
  // a step is refused, then bisection. The budget covers everything the run allocates
  // beyond its data (parameters, gradients, optimizer state, activations).
  void measure();
  std::vector<std::int64_t> cyclic_batch(std::int64_t batch) const;

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

// The optimizer of [train] (AdamW or SGD), weight decay on matrices only.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(Model& model, const TrainSettings& train);

}  // namespace lrb
