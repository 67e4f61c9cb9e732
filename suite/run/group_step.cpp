#include "suite/run/run_execution.h"

#include <ATen/ATen.h>
#include <fmt/core.h>
#include <torch/utils.h>

#include <stdexcept>

#include "suite/core/seeds.h"
#include "suite/core/stop_flag.h"
#include "suite/mpi/run_group.h"
#include "suite/nn/cpu/fused_adamw.h"
#include "suite/run/gradient_exchange.h"
#include "suite/runtime/counting_allocator.h"
#include "suite/runtime/torch_compat_optim.h"

namespace lrb {

namespace fs = std::filesystem;

// A data-parallel step: this member's slice of the global batch `idx` (contiguous, sizes
// differing by at most one), its loss scaled by the slice's share so that the group's
// summed gradient is the global batch's mean gradient, the exchange, then the same
// clipping and optimizer step on every member. Dropout draws from a stream per step and
// member, so that a resumed run draws what an uninterrupted one would.
void RunExecution::step_in_group(const std::vector<std::int64_t>& idx, StepResult& r, PhaseClock& clock) {
  const int member = ctx_.group->rank(), members = ctx_.group->size();
  const auto total = static_cast<std::int64_t>(idx.size());
  const std::int64_t begin = total * member / members, end = total * (member + 1) / members;
  torch::manual_seed(derive_seed(run_.seed_base(), static_cast<std::uint64_t>(run_.stream_index(kStreamDropout)),
                                 fmt::format("{}/step-{}/member-{}", kStreamDropout, state_.step, member)));
  double share = 0;
  std::string error;
  try {
    torch_compat::zero_gradients(*optimizer_);
    r.phases.optimizer = clock.lap();
    const std::vector<std::int64_t> mine(idx.begin() + begin, idx.begin() + end);
    const at::Tensor index = at::tensor(at::ArrayRef<std::int64_t>(mine), at::kLong);
    const at::Tensor x = data_->train.x.index_select(0, index).to(device_);
    const at::Tensor y = data_->train.y.index_select(0, index).to(device_);
    r.phases.data = clock.lap();
    const at::Tensor loss =
        loss_of(forward_in_precision(x), y, run_.task_info.multilabel) * (static_cast<double>(end - begin) / static_cast<double>(total));
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
    clip_and_step(*optimizer_, model_->parameters(), run_.train.grad_clip);
    r.phases.optimizer += clock.lap();
  }
}

// Collective, at each step boundary of a group: every member learns whether one was
// asked to stop or failed since the last boundary, so that all stop at the same step.
void RunExecution::agree_at_boundary() {
  const int mine = !pending_error_.empty() ? 2 : stop_requested() ? 1 : 0;
  const int code = ctx_.group->max(mine);
  if (code == 2) {
    const std::string why = pending_error_;
    pending_error_.clear();
    fail_if_any_member_failed(why);
  }
  if (code == 1 && state_.step < run_.train.steps) throw StopRequested{};
}

// Collective: when any member's text is not empty, every member throws it (the first).
void RunExecution::fail_if_any_member_failed(const std::string& why) {
  const auto texts = ctx_.group->gather_text(why);
  for (std::size_t m = 0; m < texts.size(); ++m)
    if (!texts[m].empty())
      throw std::runtime_error(fmt::format("member {} of the run's {}-rank group failed: {}", m, ctx_.group->size(), texts[m]));
}

}  // namespace lrb
