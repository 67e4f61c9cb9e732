#include "tests/support/report_runs.h"

#include <cmath>

#include "suite/config/run_spec.h"
#include "suite/store/results_folder.h"
#include "suite/store/results_layout.h"
#include "suite/store/run_file.h"

namespace lrb::test {

RunRecord make_run(const RunDraft& d) {
  RunRecord r;
  r.spec = {{"version", 1},
            {"task", {{"name", d.task}, {"seq_len", d.seq_len}, {"options", {{"train_size", 128}}}}},
            {"model", {{"name", d.model}, {"options", d.model_options}}},
            {"train", {{"steps", 30}, {"batch_size", 8}, {"lr", 1e-3}}},
            {"seed_index", d.seed},
            {"base_seed", d.base_seed},
            {"device", "cpu"}};
  if (d.ranks_per_run > 1) r.spec["ranks_per_run"] = d.ranks_per_run;
  for (const auto& [k, v] : d.train.items()) r.spec["train"][k] = v;
  if (!d.match.is_null()) r.spec["model"]["match"] = d.match;
  if (!d.streams.is_null()) r.spec["streams"] = d.streams;
  r.key = run_key_of(r.spec);
  r.provenance = {{"host", "node-1"}, {"rank", 0}, {"threads", d.threads}, {"git_revision", d.revision}, {"git_dirty", false}};
  for (const auto& [k, v] : d.provenance.items()) r.provenance[k] = v;
  r.status = d.status;
  r.error = d.error;
  r.metrics = d.metrics;
  r.records = {{"task", {{"metrics", {"accuracy"}}}}};
  return r;
}

RunRecord write_run(const std::filesystem::path& dir, const RunDraft& d) {
  RunRecord r = make_run(d);
  write_runs(dir, {r});
  return r;
}

namespace {
RunDraft draft(const std::string& task, std::int64_t seq_len, const std::string& model, int seed,
               std::map<std::string, double> metrics, nlohmann::json options = nlohmann::json::object()) {
  RunDraft d;
  d.task = task;
  d.seq_len = seq_len;
  d.model = model;
  d.seed = seed;
  d.metrics = std::move(metrics);
  d.model_options = std::move(options);
  return d;
}
RunDraft not_ok(RunDraft d, RunStatus status, const std::string& error, int threads = 1) {
  d.status = status;
  d.error = error;
  d.threads = threads;
  return d;
}
}  // namespace

void write_report_fixture(const std::filesystem::path& dir) {
  const nlohmann::json dim16 = {{"dim", 16}};
  const double transformer[] = {0.60, 0.64, 0.62};
  for (int s = 0; s < 3; ++s)
    write_run(dir, draft("listops", 64, "transformer", s, {{"eval_accuracy", transformer[s]}, {"eval_loss", 1.0 - transformer[s]}}, dim16));
  const double linear[] = {0.70, 0.73};
  for (int s = 0; s < 2; ++s)
    write_run(dir, draft("listops", 64, "linear", s, {{"eval_accuracy", linear[s]}, {"eval_loss", 1.0 - linear[s]}}));
  write_run(dir, not_ok(draft("listops", 64, "linear", 2, {{"steps_done", 3}}), RunStatus::Failed, "non-finite loss at step 3"));
  RunDraft bb = draft("listops", 64, "bigbird", 0, {{"eval_accuracy", 0.55}});
  bb.threads = 2;
  write_run(dir, bb);
  write_run(dir, not_ok(draft("listops", 64, "bigbird", 1, {}), RunStatus::Stopped, "stopped by SIGTERM at step 12", 2));

  for (std::int64_t n : {128, 256, 512, 1024})
    for (int s = 0; s < 2; ++s) {
      const double noise = 1.0 + (s == 0 ? 0.01 : -0.01) * (n % 384 == 128 ? 1 : -1);
      const double x = static_cast<double>(n);
      write_run(dir, draft("text", n, "transformer", s,
                           {{"eval_accuracy", 0.8 - 0.05 * std::log2(x / 128) + 0.01 * s},
                            {"peak_bytes", 64.0 * x * x * noise},
                            {"step_seconds_median", 1e-7 * x * x * noise},
                            {"step_seconds_p95", 1.2e-7 * x * x * noise},
                            {"samples_per_s", 1e6 / (x * x)},
                            {"params", 50000},
                            {"flops_per_sample", 1000.0 * x * x}},
                           dim16));
      write_run(dir, draft("text", n, "linear", s,
                           {{"eval_accuracy", 0.78 - 0.04 * std::log2(x / 128) - 0.01 * s},
                            {"peak_bytes", 4096.0 * x * noise},
                            {"step_seconds_median", 1e-5 * x * noise},
                            {"step_seconds_p95", 1.3e-5 * x * noise},
                            {"samples_per_s", 1e4 / x},
                            {"params", 40000},
                            {"flops_per_sample", 50000.0 * x}}));
    }
}

std::vector<RunRecord> front_runs() {
  struct Cell {
    const char* model;
    double accuracy, spread, flops;
  };
  const Cell cells[] = {{"linear", 0.70, 0.002, 1e12},      {"longformer", 0.70, 0.002, 1e12}, {"bigbird", 0.75, 0.002, 8e12},
                        {"transformer", 0.60, 0.002, 4e12}, {"maelre", 0.65, 0.002, 2e12},     {"mvit", 0.69, 0.03, 1.5e12}};
  const double wobble[] = {1, -1, 0.5, -0.5};
  std::vector<RunRecord> out;
  for (const auto& c : cells)
    for (int s = 0; s < 4; ++s) {
      RunDraft d = draft("listops", 64, c.model, s, {});
      const double acc = c.accuracy + c.spread * wobble[s];
      d.metrics = {{"eval_accuracy", acc}, {"eval_loss", 1.0 - acc}, {"train_flops", c.flops}, {"params", 1e5}};
      if (std::string(c.model) == "maelre" && s >= 2) d = not_ok(d, s == 2 ? RunStatus::Failed : RunStatus::Stopped, s == 2 ? "out of memory" : "stopped by SIGTERM");
      out.push_back(make_run(d));
    }
  return out;
}

std::vector<RunRecord> target_runs(const std::string& task, const std::map<std::string, std::vector<int>>& steps) {
  std::vector<RunRecord> out;
  for (const auto& [model, per_seed] : steps)
    for (int s = 0; s < static_cast<int>(per_seed.size()); ++s) {
      const int step = per_seed[static_cast<std::size_t>(s)];
      RunDraft d = draft(task, 64, model, s, {{"eval_accuracy", step > 0 ? 0.72 : 0.65}, {"target_reached", step > 0 ? 1.0 : 0.0}});
      d.train = {{"target", {{"metric", "eval_accuracy"}, {"value", 0.7}}}};
      if (step > 0) {
        d.metrics["target_step"] = step;
        d.metrics["target_flops"] = step * 1e9;
        d.metrics["target_seconds"] = step * 0.01;
      }
      if (step < 0) d = not_ok(d, step == -1 ? RunStatus::Failed : RunStatus::Stopped, step == -1 ? "non-finite loss" : "stopped by SIGUSR1");
      out.push_back(make_run(d));
    }
  return out;
}

std::vector<RunRecord> three_task_target_runs() {
  std::vector<RunRecord> runs;
  for (const auto& [task, steps] : std::vector<std::pair<std::string, std::map<std::string, std::vector<int>>>>{
           {"listops", {{"linear", {100, 100}}, {"maelre", {200, 200}}, {"transformer", {0, 0}}}},
           {"text", {{"linear", {300, 300}}, {"maelre", {150, 150}}, {"transformer", {150, 150}}}},
           {"image", {{"linear", {400, 400}}, {"maelre", {0, 0}}, {"transformer", {100, 100}}}}})
    for (auto& r : target_runs(task, steps)) runs.push_back(std::move(r));
  return runs;
}

void write_runs(const std::filesystem::path& dir, const std::vector<RunRecord>& runs) {
  std::filesystem::create_directories(dir / "runs");
  for (const auto& r : runs) write_run_file(ResultsLayout(dir).run_file(r.key), r);
}

namespace {
// What variant_runs() evaluated: three variants at batch sizes 1 and 16, with probes.
const nlohmann::json kVariantEvaluate = {
    {"batch_sizes", {1, 16}},
    {"repeats", 3},
    {"warmup", 1},
    {"probes", true},
    {"variants",
     {{{"name", "full"}, {"settings", {{"merge", false}, {"unmerge", "duplicate"}}}},
      {{"name", "merge-dup"}, {"settings", {{"merge", true}, {"unmerge", "duplicate"}}}},
      {{"name", "merge-zero"}, {"settings", {{"merge", true}, {"unmerge", "zero"}}}}}}};
}  // namespace

std::vector<RunRecord> variant_runs() {
  std::vector<RunRecord> out;
  for (int s = 0; s < 4; ++s) {
    RunDraft d;
    d.model = "sret";
    d.task = "fashion-mnist";
    d.seed = s;
    const double trained = 0.80 + 0.02 * s, wobble = (s % 2 ? 0.002 : -0.002);
    d.metrics = {{"eval_accuracy", trained},
                 {"variant.full.eval_accuracy", trained},
                 {"variant.merge-dup.eval_accuracy", trained - 0.015 + wobble},
                 {"variant.merge-zero.eval_accuracy", trained - 0.05 - wobble},
                 {"variant.full.infer_peak_bytes_b16", 1000},
                 {"variant.merge-dup.infer_peak_bytes_b16", 610},
                 {"variant.full.probe_pool1_cosine", 1.0},
                 {"variant.merge-dup.probe_pool1_cosine", 0.9},
                 {"variant.merge-zero.probe_pool1_cosine", 0.6}};
    RunRecord r = make_run(d);
    r.spec["evaluate"] = kVariantEvaluate;
    r.key = run_key_of(r.spec);
    r.curves["variant.full.infer_seconds_b16"] = {0.16, 0.2, 0.32};
    r.curves["variant.merge-dup.infer_seconds_b16"] = {0.1, 0.16, 0.2};
    r.records["probes"] = {"pool1"};
    out.push_back(r);
  }
  return out;
}

}  // namespace lrb::test
