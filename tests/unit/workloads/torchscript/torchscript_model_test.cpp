// model = "torchscript": a module saved from Python is checked before any run (each bad
// file a UserError saying what to do), each seed draws its own initialisation, the module's
// tensors are the model's, and its FLOPs are counted from the products it runs.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "suite/contracts/model.h"
#include "suite/core/errors.h"
#include "suite/registry/registry.h"
#include "tests/support/script_test_files.h"
#include "workloads/torchscript/script_module.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;
using test::script_test_files;

TaskInfo token_task() {
  TaskInfo t;
  t.modality = Modality::Tokens;
  t.input_shape = {test::kScriptSeqLen};
  t.num_classes = test::kScriptClasses;
  t.vocab_size = test::kScriptVocab;
  t.pad_token = 0;
  t.metrics = {"accuracy"};
  return t;
}

const ModelEntry& entry() {
  const ModelEntry* e = ModelRegistry::instance().find("torchscript");
  EXPECT_NE(e, nullptr);
  return *e;
}

// The resolved options of a [[model]] table naming `file`, as the sweep's expansion makes them.
json resolved(const fs::path& file, bool same_init = false, const TaskInfo& task = token_task()) {
  json o = {{"file", file.string()}, {"same_init", same_init}, {"file_sha256", nullptr}};
  entry().schema.resolve(o, task.to_json());
  return o;
}

// The message of the OptionError resolving `file` gives, "" when it resolves.
std::string resolve_error(const fs::path& file, bool same_init = false) {
  try {
    resolved(file, same_init);
    return "";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.options, std::vector<std::string>{"file"});
    return e.what();
  }
}

std::shared_ptr<Model> make_model(const json& options, std::uint64_t seed) {
  at::manual_seed(seed);
  return entry().make(options, token_task());
}

at::Tensor batch() {
  return at::arange(2 * test::kScriptSeqLen, at::kLong).remainder(test::kScriptVocab - 1).add(1).reshape({2, test::kScriptSeqLen});
}

std::vector<at::Tensor> weights(Model& m) {
  std::vector<at::Tensor> out;
  for (const auto& p : m.parameters()) out.push_back(p.detach().clone());
  return out;
}

bool same(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!at::equal(a[i], b[i])) return false;
  return true;
}

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_bytes(const fs::path& p, const std::string& b) { std::ofstream(p, std::ios::binary | std::ios::trunc) << b; }

TEST(TorchScriptModel, ForwardIsTriedOnATrialBatchAndItsProductsCounted) {
  ScriptFile f = load_script_file((script_test_files() / "good.pt").string());
  EXPECT_EQ(f.sha256.size(), 64u);
  const ScriptFit fit = check_script_fits(f, token_task(), false);
  EXPECT_TRUE(fit.takes_keep);
  EXPECT_TRUE(fit.has_reset);
  // TinyAttention at dim 16 on 48 tokens: q, k, v; scores and weighted values; the output
  // projection; the feed-forward block; the head (multiply-add = 2 FLOPs).
  const double n = test::kScriptSeqLen, d = 16, c = test::kScriptClasses;
  const double expected = 2 * n * d * 3 * d + 2 * 2 * n * n * d + 2 * n * d * d + 2 * 2 * n * d * 2 * d + 2 * d * c;
  EXPECT_DOUBLE_EQ(fit.flops_per_sample, expected);
  EXPECT_DOUBLE_EQ(entry().flops(resolved(script_test_files() / "good.pt"), token_task()), expected);
  // A module in which no product runs: its FLOPs are not counted (NaN), never 0.
  EXPECT_TRUE(std::isnan(entry().flops(resolved(script_test_files() / "bias_only.pt"), token_task())));
}

TEST(TorchScriptModel, EveryBadFileIsAUserErrorThatSaysWhatToDo) {
  const fs::path dir = script_test_files();
  test::TempDir t;
  ASSERT_EQ(::mkfifo((t / "fifo.pt").c_str(), 0600), 0);
  test::write_text(t / "text.pt", "not a model\n");
  const std::vector<std::pair<fs::path, std::string>> cases = {
      {t / "missing.pt", "does not exist"},
      {t.path(), "not a regular file"},
      {"/dev/zero", "not a regular file"},
      {t / "fifo.pt", "not a regular file"},
      {t / "text.pt", "is damaged or is not a file torch.jit.save wrote"},
      {dir / "state_dict.pt", "is not TorchScript"},
      {dir / "newer.pt", "was saved by a newer PyTorch"},
      // Issue 66 item 16: it was called "not TorchScript", and LibTorch's reason cut to its first line.
      {dir / "bad_code.pt", "is TorchScript, but LibTorch"},
      {dir / "bad_code.pt", "lrb_no_such_op"},
      // Issue 66 item 14: 16 KB that inflated to 4 GiB, record by record, before LibTorch did it again.
      {dir / "bomb.pt", "two of its records share bytes"},
      {dir / "no_reset.pt", "exports no reset_parameters(seed: int)"},
      {dir / "reset_without_seed.pt", "reset_parameters must take one int"},
      {dir / "ignores_seed.pt", "reset_parameters ignores its seed: seeds 1 and 2 gave the very same weights"},
      {dir / "tuple_out.pt", "forward must be forward(self, x: Tensor) -> Tensor"},
      {dir / "wrong_classes.pt", "forward returned logits of shape [2, 11] for a batch of 2; the task has 10 classes"},
  };
  for (const auto& [file, says] : cases) {
    const std::string error = resolve_error(file);
    EXPECT_NE(error.find(says), std::string::npos) << file << ": " << error;
    EXPECT_NE(error.find(file.string()), std::string::npos) << "the message names the file: " << error;
  }
  // same_init lets a module without reset_parameters in; one whose logits depend on no
  // parameter still cannot learn.
  EXPECT_EQ(resolve_error(dir / "no_reset.pt", true), "");
  EXPECT_NE(resolve_error(dir / "constant_out.pt", true).find("depend on no trainable parameter"), std::string::npos);
  // The digest is lrbench's to fill in.
  json o = {{"file", (dir / "good.pt").string()}, {"same_init", false}, {"file_sha256", "0123"}};
  EXPECT_THROW(entry().schema.resolve(o, token_task().to_json()), OptionError);
}

// A flipped byte anywhere is refused, or lands where nothing that loads depends on it (a
// header's time stamp, alignment padding): the module then loads with the very weights and
// code of the intact file. A truncated file is always refused. Never a crash.
TEST(TorchScriptModel, ADamagedFileIsRefusedOrLoadsUnchanged) {
  const fs::path good = script_test_files() / "good.pt";
  const std::string bytes = bytes_of(good);
  ScriptFile intact = load_script_file(good.string());
  std::vector<at::Tensor> reference;
  for (const auto& p : intact.module.parameters()) reference.push_back(p.detach().clone());
  test::TempDir t;
  const fs::path damaged = t / "damaged.pt";
  std::size_t refused = 0, flips = 0;
  for (std::size_t at = 0; at < bytes.size(); at += 37, ++flips) {
    std::string b = bytes;
    b[at] = static_cast<char>(b[at] ^ 0x5a);
    write_bytes(damaged, b);
    try {
      ScriptFile f = load_script_file(damaged.string());
      check_script_fits(f, token_task(), false);
      std::vector<at::Tensor> loaded;
      for (const auto& p : f.module.parameters()) loaded.push_back(p.detach().clone());
      EXPECT_TRUE(same(loaded, reference)) << "a flip at byte " << at << " changed the weights unseen";
    } catch (const UserError&) {
      ++refused;
    }
  }
  // A saved module is mostly weights and code; its headers hold time stamps and padding.
  EXPECT_GT(refused, flips * 3 / 4) << "most bytes of a module matter";
  for (std::size_t keep = 0; keep < bytes.size(); keep += 211) {
    write_bytes(damaged, bytes.substr(0, keep));
    EXPECT_THROW(load_script_file(damaged.string()), UserError) << "truncated to " << keep << " bytes";
  }
}

TEST(TorchScriptModel, EachSeedDrawsItsOwnInitialisationThroughResetParameters) {
  const json o = resolved(script_test_files() / "good.pt");
  const auto a = make_model(o, 1), a_again = make_model(o, 1), b = make_model(o, 2);
  EXPECT_TRUE(same(weights(*a), weights(*a_again)));
  EXPECT_FALSE(same(weights(*a), weights(*b)));
  ScriptFile saved = load_script_file(o.at("file"));
  std::vector<at::Tensor> file_weights;
  for (const auto& p : saved.module.parameters()) file_weights.push_back(p.detach().clone());
  EXPECT_FALSE(same(weights(*a), file_weights));
  // same_init: every seed starts from the saved weights, and the run's provenance says so.
  const json shared = resolved(script_test_files() / "good.pt", true);
  const auto s1 = make_model(shared, 1), s2 = make_model(shared, 2);
  EXPECT_TRUE(same(weights(*s1), file_weights));
  EXPECT_TRUE(same(weights(*s2), file_weights));
  EXPECT_EQ(s1->provenance().at("same_init"), true);
  EXPECT_EQ(a->provenance().at("same_init"), false);
  EXPECT_EQ(a->provenance().at("sha256"), o.at("file_sha256"));
}

TEST(TorchScriptModel, ItsParametersAreTheModulesOwnTensors) {
  const auto m = make_model(resolved(script_test_files() / "good.pt"), 3);
  // The names are the module's; the tensors are the ones its forward reads.
  std::vector<std::string> names;
  for (const auto& p : m->named_parameters()) names.push_back(p.key());
  for (const char* name : {"stem.embed.weight", "stem.position", "qkv.weight", "head.bias"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  m->eval();
  const at::Tensor before = m->forward(batch());
  {
    at::NoGradGuard no_grad;
    m->named_parameters()["head.bias"].add_(1.0);
  }
  EXPECT_TRUE(at::allclose(m->forward(batch()), before + 1.0, 1e-5, 1e-5));
  // A checkpoint written from one model and read into another of another seed gives it
  // the first one's outputs.
  torch::serialize::OutputArchive out;
  m->save(out);
  std::ostringstream stream;
  out.save_to(stream);
  const auto other = make_model(resolved(script_test_files() / "good.pt"), 4);
  other->eval();
  EXPECT_FALSE(at::equal(other->forward(batch()), m->forward(batch())));
  torch::serialize::InputArchive in;
  std::istringstream read(stream.str());
  in.load_from(read);
  other->load(in);
  EXPECT_TRUE(at::equal(other->forward(batch()), m->forward(batch())));
  // A matrix two layers share is one parameter: the optimizer must step it once.
  const auto tied = make_model(resolved(script_test_files() / "tied.pt"), 3);
  std::size_t shared = 0;
  for (const auto& p : tied->named_parameters())
    if (p.key() == "first.weight" || p.key() == "second.weight") ++shared;
  EXPECT_EQ(shared, 1u);
  EXPECT_EQ(tied->parameters().size(), tied->named_parameters().size());
}

// What the model zoo checks of every built-in model (tests/unit/contracts/model_zoo_test.cpp).
TEST(TorchScriptModel, BackwardReachesEveryParameterAndTheSameSeedTrainsTheSame) {
  const json o = resolved(script_test_files() / "good.pt");
  const at::Tensor y = at::arange(2, at::kLong);
  const auto train = [&](int steps) {
    const auto m = make_model(o, 5);
    torch::optim::Adam opt(m->parameters(), torch::optim::AdamOptions(1e-2));
    m->train();
    for (int i = 0; i < steps; ++i) {
      opt.zero_grad();
      at::cross_entropy_loss(m->forward(batch()), y).backward();
      if (i == 0) {
        for (const auto& p : m->named_parameters()) {
          EXPECT_TRUE(p.value().grad().defined()) << "no gradient for " << p.key();
        }
      }
      opt.step();
    }
    m->eval();
    return m->forward(batch()).detach();
  };
  const at::Tensor trained = train(30);
  EXPECT_TRUE(at::equal(trained.argmax(1), y)) << "two samples were not learnt";
  EXPECT_TRUE(at::equal(trained, train(30)));
}

TEST(TorchScriptModel, AFileChangedAfterThePlanIsRefused) {
  test::TempDir t;
  fs::copy_file(script_test_files() / "good.pt", t / "model.pt");
  const json planned = resolved(t / "model.pt");
  fs::copy_file(script_test_files() / "grid.pt", t / "model.pt", fs::copy_options::overwrite_existing);
  try {
    make_model(planned, 1);
    ADD_FAILURE() << "a changed file was trained";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("changed after the sweep was planned"), std::string::npos) << e.what();
  }
  EXPECT_NE(resolved(t / "model.pt", false, [] {
              TaskInfo g;
              g.modality = Modality::Grid;
              g.input_shape = {1, 28, 28};
              g.num_classes = 10;
              g.metrics = {"accuracy"};
              return g;
            }()).at("file_sha256"),
            planned.at("file_sha256"));
}

}  // namespace
}  // namespace lrb
