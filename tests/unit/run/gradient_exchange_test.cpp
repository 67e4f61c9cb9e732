// The gradient exchange of data-parallel groups through the RunGroup interface, in a world
// of one process: over MPI (host memory) on every machine, over NCCL on a GPU machine with
// a build that has it (skipped elsewhere, with the reason printed). Groups of several ranks
// are tested under mpirun (tests/integration/data_parallel_e2e_test.cpp).
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "suite/mpi/mpi_session.h"
#include "suite/mpi/nccl_run_group.h"
#include "suite/run/gradient_exchange.h"
#include "suite/runtime/cuda_device.h"

namespace lrb {
namespace {

// A world of one: no launcher in the environment, so no MPI call is made.
MpiSession& world_of_one() {
  static int argc = 1;
  static char name[] = "lrb_tests";
  static char* args[] = {name, nullptr};
  static char** argv = args;
  static MpiSession session(&argc, &argv);
  return session;
}

// Two parameters with gradients and one without, on `device`.
std::vector<at::Tensor> parameters_on(const at::Device& device) {
  const auto opts = at::TensorOptions().dtype(at::kFloat).device(device);
  std::vector<at::Tensor> ps = {at::arange(6, opts).reshape({2, 3}).set_requires_grad(true),
                                at::ones({4}, opts).set_requires_grad(true), at::zeros({3}, opts).set_requires_grad(true)};
  ps[0].mutable_grad() = at::linspace(-1, 1, 6, opts).reshape({2, 3});
  ps[1].mutable_grad() = at::full({4}, 0.25, opts);
  return ps;
}

// Exchanged in a group of one, every gradient keeps its bits, the one without stays without,
// and the loss is this member's share.
void expect_one_member_exchange(RunGroup& group, const at::Device& device) {
  std::vector<at::Tensor> ps = parameters_on(device);
  const at::Tensor g0 = ps[0].grad().clone(), g1 = ps[1].grad().clone();
  const ExchangeResult r = exchange_gradients(group, ps, 0.75, "");
  ASSERT_FALSE(r.failed) << r.error;
  EXPECT_DOUBLE_EQ(r.loss, 0.75);
  EXPECT_TRUE(at::equal(ps[0].grad(), g0));
  EXPECT_TRUE(at::equal(ps[1].grad(), g1));
  EXPECT_FALSE(ps[2].grad().defined());
  EXPECT_EQ(ps[0].grad().device(), device) << "the gradients stay where the parameters are";
  EXPECT_EQ(replicas_differ(group, ps), "");
}

TEST(GradientExchange, OverMpiInAWorldOfOneKeepsTheGradientsAndSaysWhyAStepFailed) {
  MpiRunGroup group(world_of_one(), 1);
  EXPECT_EQ(group.exchange(), "mpi");
  EXPECT_EQ(group.describe().at("exchange"), "mpi");
  EXPECT_EQ(group.open_device_exchange(0), "") << "host memory needs nothing opened";
  expect_one_member_exchange(group, at::Device(at::kCPU));
  std::vector<at::Tensor> ps = parameters_on(at::Device(at::kCPU));
  const ExchangeResult failed = exchange_gradients(group, ps, 0.0, "out of memory in the forward pass");
  EXPECT_TRUE(failed.failed);
  EXPECT_EQ(failed.error, "member 0 of the run's 1-rank group failed: out of memory in the forward pass");
}

TEST(GradientExchange, AutoChoosesNcclOnlyForCudaInABuildWithIt) {
  EXPECT_EQ(chosen_exchange("auto", "cpu"), "mpi");
  EXPECT_EQ(chosen_exchange("auto", "cuda"), nccl_compiled() ? "nccl" : "mpi");
  EXPECT_EQ(chosen_exchange("mpi", "cuda"), "mpi");
  EXPECT_EQ(chosen_exchange("nccl", "cuda"), "nccl");
  EXPECT_EQ(nccl_version().empty(), !nccl_compiled());
}

// The failure path every machine can take: a group that cannot open its NCCL exchange
// gives the reason (the runner fails the run with it), the same on every later run.
TEST(GradientExchange, ANcclGroupThatCannotOpenItsExchangeSaysWhy) {
  if (nccl_compiled() && cuda_device_count() > 0) GTEST_SKIP() << "this build has NCCL and a GPU: the next test opens it";
  MpiRunGroup members(world_of_one(), 1);
  NcclRunGroup group(members, world_of_one());
  EXPECT_EQ(group.exchange(), "nccl");
  EXPECT_EQ(group.describe().at("exchange"), "nccl");
  const std::string why = group.open_device_exchange(0);
  EXPECT_NE(why, "");
  EXPECT_NE(why.find(nccl_compiled() ? "could not create its NCCL communicator" : "built without NCCL"), std::string::npos) << why;
  EXPECT_EQ(group.open_device_exchange(0), why) << "not retried";
}

TEST(GradientExchange, OverNcclOnOneGpuSumsOnTheDeviceReusesItsCommunicatorAndTearsDown) {
  if (!nccl_compiled()) GTEST_SKIP() << "this lrbench was built without NCCL (LRB_WITH_NCCL off)";
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: NCCL's exchange needs a GPU";
  MpiRunGroup members(world_of_one(), 1);
  {
    NcclRunGroup group(members, world_of_one());
    ASSERT_EQ(group.open_device_exchange(0), "");
    EXPECT_EQ(group.describe().at("nccl_version"), nccl_version());
    expect_one_member_exchange(group, at::Device(at::kCUDA, 0));
    ASSERT_EQ(group.open_device_exchange(0), "") << "the second run reuses the communicator";
    expect_one_member_exchange(group, at::Device(at::kCUDA, 0));
  }  // destroyed cleanly here (ncclCommFinalize, ncclCommDestroy)
  NcclRunGroup again(members, world_of_one());
  EXPECT_EQ(again.open_device_exchange(0), "") << "a new group after the first was torn down";
}

}  // namespace
}  // namespace lrb
