#pragma once
// One data-parallel step's exchange (suite/mpi/run_group.h): every member's gradients,
// which parameters have one, its share of the loss and whether its step failed travel in
// one flat buffer, summed over the group. Afterwards every member holds the same
// gradients, bit for bit, so their optimizer steps keep the replicas identical.
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

namespace lrb {

class RunGroup;

struct ExchangeResult {
  double loss = 0;    // the members' loss shares summed: the global batch's mean loss
  bool failed = false;
  std::string error;  // when failed: which member failed, and why
};

// `loss_share` is this member's mean loss times its slice of the global batch; `error`,
// when not empty, says why this member's step failed (its gradients are then not sent).
// A parameter whose gradient no member has stays without one.
ExchangeResult exchange_gradients(RunGroup& group, const std::vector<at::Tensor>& parameters, double loss_share,
                                  const std::string& error);

// A digest of the parameters' bytes, compared over the group: "" when every member holds
// the same weights, else what differs. Checked once per run (correctness on every run).
std::string replicas_differ(RunGroup& group, const std::vector<at::Tensor>& parameters);

}  // namespace lrb
