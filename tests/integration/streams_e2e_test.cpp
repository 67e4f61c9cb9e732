// SlowStreams*: [sweep] vary and fixed on real runs. A stream named at an index draws what
// the plain run of that seed draws from it; runs pair on the whole tuple of stream indices.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "suite/config/run_streams.h"
#include "suite/core/exit_codes.h"
#include "tests/support/results.h"
#include "tests/support/subprocess.h"
#include "tests/support/sweeps.h"

namespace lrb {
namespace {

using test::TempDir;

const RunRecord& find_run(const std::map<std::string, RunRecord>& runs, const std::string& attention, std::int64_t seed,
                          const nlohmann::json& streams) {
  for (const auto& [key, r] : runs)
    if (r.spec.at("model").at("options").at("attention") == attention && r.spec.at("seed_index") == seed &&
        r.spec.value("streams", nlohmann::json()) == streams)
      return r;
  throw std::runtime_error("no run " + attention + " seed " + std::to_string(seed) + " " + streams.dump());
}

// Same draws, same numbers: the training curve and the evaluation, bit for bit.
bool same_numbers(const RunRecord& a, const RunRecord& b) {
  return a.curves.at("train_loss") == b.curves.at("train_loss") && a.metrics.at("eval_loss") == b.metrics.at("eval_loss") &&
         a.metrics.at("eval_accuracy") == b.metrics.at("eval_accuracy");
}

TEST(SlowStreams, EachStreamDrawsAtItsOwnIndexAndRunsPairOnTheTuple) {
  TempDir t;
  test::write_text(t / "plain.toml", test::tiny_sweep(20));
  test::write_text(t / "streams.toml", test::tiny_sweep(20, "vary = { init = 2 }\nfixed = [\"data\"]\n"));
  const auto plain = test::run({test::lrbench(), "run", (t / "plain.toml").string(), "--out", (t / "plain").string()});
  ASSERT_EQ(plain.code, kExitDone) << plain.output;
  const auto streams = test::run({test::lrbench(), "run", (t / "streams.toml").string(), "--out", (t / "streams").string()});
  ASSERT_EQ(streams.code, kExitDone) << streams.output;
  const auto p = test::read_runs(t / "plain"), s = test::read_runs(t / "streams");
  ASSERT_EQ(p.size(), 4u);
  ASSERT_EQ(s.size(), 8u);  // 2 seeds x 2 attention kinds x 2 init indices
  const nlohmann::json init0 = {{"data", 0}, {"init", 0}}, init1 = {{"data", 0}, {"init", 1}};
  for (const std::string attention : {"softmax", "linear"}) {
    // Seed 0 with data and init at 0 draws every stream at 0: the plain seed-0 run, bit for bit.
    EXPECT_TRUE(same_numbers(find_run(s, attention, 0, init0), find_run(p, attention, 0, nullptr)));
    // Init at 1 is another initialisation: the first training loss moves.
    const RunRecord& other_init = find_run(s, attention, 0, init1);
    EXPECT_NE(other_init.curves.at("train_loss").front(), find_run(s, attention, 0, init0).curves.at("train_loss").front());
    // Seed 1 with data held at 0 trains on seed 0's data: its evaluation split's chance is seed 0's.
    EXPECT_EQ(find_run(s, attention, 1, init0).metrics.at("eval_chance"), find_run(p, attention, 0, nullptr).metrics.at("eval_chance"));
    EXPECT_FALSE(same_numbers(find_run(s, attention, 1, init1), find_run(p, attention, 1, nullptr)));
  }
  // The report pairs softmax with linear on the four tuples, labelled by their indices.
  auto js = test::run({test::lrbench(), "report", (t / "streams").string(), "--format", "json"});
  ASSERT_EQ(js.code, kExitDone) << js.output;
  const auto j = nlohmann::json::parse(js.output);
  ASSERT_EQ(j.at("comparisons").size(), 1u) << js.output;
  EXPECT_EQ(j.at("comparisons")[0].at("n_pairs"), 4);
  // Resumed: every run is found finished by its key.
  const auto again = test::run({test::lrbench(), "run", (t / "streams.toml").string(), "--out", (t / "streams").string()});
  ASSERT_EQ(again.code, kExitDone) << again.output;
  EXPECT_NE(again.output.find("0 ran now"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("8 were already finished"), std::string::npos) << again.output;
}

}  // namespace
}  // namespace lrb
