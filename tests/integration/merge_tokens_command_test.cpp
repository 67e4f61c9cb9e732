// lrbench merge-tokens: ToMe's merging on the user's own tensors, and clear errors.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "suite/core/exit_codes.h"
#include "suite/nn/token_merging.h"
#include "suite/hdf5/h5.h"
#include "tests/support/h5_tensors.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

void write_double(const h5::File& f, const std::string& name, const at::Tensor& t) {
  test::write_tensor(f, name, t, at::kDouble);
}

at::Tensor read_double(const std::filesystem::path& path, const std::string& name) {
  return test::read_tensor(path, name, at::kDouble);
}

TEST(SlowMergeTokensCommand, MergesTheUsersTensorsAsTheLibraryDoes) {
  test::TempDir t;
  at::manual_seed(8);
  const at::Tensor x = at::randn({2, 17, 4}, at::kDouble), metric = at::randn({2, 17, 3}, at::kDouble);
  const at::Tensor size = at::randint(1, 3, {2, 17, 1}, at::kDouble);
  {
    h5::File f = h5::create_file(t / "in.h5");
    write_double(f, "x", x);
    write_double(f, "metric", metric);
    write_double(f, "size", size);
    f.close();
  }
  auto r = test::run({test::lrbench(), "merge-tokens", "--r", "6", "--class-token", "--in", (t / "in.h5").string(), "--out",
                      (t / "out.h5").string()});
  ASSERT_EQ(r.code, kExitDone) << r.output;
  EXPECT_NE(r.output.find("17 tokens -> 11 (r = 6), unmerged by duplicate"), std::string::npos) << r.output;
  const TokenMatch m = bipartite_soft_matching(metric, 6, true);
  const MergedTokens expected = merge_weighted(m, x, size);
  EXPECT_TRUE(at::equal(read_double(t / "out.h5", "x_merged"), expected.x));
  EXPECT_TRUE(at::equal(read_double(t / "out.h5", "size_merged"), expected.size));
  EXPECT_TRUE(at::equal(read_double(t / "out.h5", "x_unmerged"), unmerge_tokens(m, expected.x)));
  EXPECT_EQ(read_double(t / "out.h5", "size_merged").sum().item<double>(), size.sum().item<double>());
  {
    const h5::File f = h5::open_file(t / "out.h5");
    EXPECT_EQ(h5::read_int_attribute(f, "r"), 6);
    EXPECT_EQ(h5::read_string_attribute(f, "unmerge"), "duplicate");
  }

  // exact puts the input back; r beyond half the tokens is clamped as ToMe clamps it.
  r = test::run({test::lrbench(), "merge-tokens", "--r", "40", "--unmerge", "exact", "--in", (t / "in.h5").string(), "--out",
                 (t / "exact.h5").string()});
  ASSERT_EQ(r.code, kExitDone) << r.output;
  EXPECT_NE(r.output.find("(r = 8, clamped from 40)"), std::string::npos) << r.output;
  EXPECT_TRUE(at::equal(read_double(t / "exact.h5", "x_unmerged"), x));

  // neighbour-mean on a grid: no position is left empty.
  r = test::run({test::lrbench(), "merge-tokens", "--r", "8", "--class-token", "--unmerge", "neighbour-mean", "--grid", "4x4", "--in",
                 (t / "in.h5").string(), "--out", (t / "near.h5").string()});
  ASSERT_EQ(r.code, kExitDone) << r.output;
  EXPECT_EQ(read_double(t / "near.h5", "x_unmerged").sizes(), x.sizes());
}

TEST(SlowMergeTokensCommand, BadInputsAreNamed) {
  test::TempDir t;
  {
    h5::File f = h5::create_file(t / "in.h5");
    write_double(f, "x", at::randn({2, 10, 4}));
    write_double(f, "metric", at::randn({2, 9, 3}));
    f.close();
  }
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {test::lrbench(), "merge-tokens", "--r", "2", "--in", (t / "in.h5").string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return test::run(argv);
  };
  auto r = run({"--out", (t / "out.h5").string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.output.find("dataset 'metric' has shape [2, 9, 3]; expected [2, 10, C'] (B and T of x)"), std::string::npos) << r.output;
  {
    h5::File f = h5::create_file(t / "in2.h5");
    write_double(f, "metric", at::randn({2, 9, 3}));
    f.close();
  }
  r = test::run({test::lrbench(), "merge-tokens", "--r", "2", "--in", (t / "in2.h5").string(), "--out", (t / "o.h5").string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.output.find("no dataset 'x'; expected [B, T, C] (3 dimensions)"), std::string::npos) << r.output;
  r = run({"--out", (t / "in.h5").string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.output.find("is the input file"), std::string::npos) << r.output;
  r = run({"--out", (t / "o.h5").string(), "--unmerge", "copy"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.output.find("--unmerge copy: one of duplicate, zero, neighbour-mean, exact"), std::string::npos) << r.output;
  std::filesystem::create_directory(t / "folder");
  r = run({"--out", (t / "folder").string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_FALSE(std::filesystem::exists(t / "o.h5"));
  // --r is a whole number from 0 to int64's largest, never clamped or printed as a 300-digit range.
  for (const char* bad : {"-1", "9223372036854775808", "1e3", "2.5"}) {
    r = test::run({test::lrbench(), "merge-tokens", "--r", bad, "--in", (t / "in.h5").string(), "--out", (t / "o.h5").string()});
    EXPECT_EQ(r.code, kExitUsage) << bad;
    EXPECT_NE(r.output.find("a whole number from 0 to 9223372036854775807"), std::string::npos) << bad << ": " << r.output;
    EXPECT_LT(r.output.size(), 400u) << r.output;
  }
  // A grid has two sizes at most: 2x4x1 is not read as 2x4.
  r = run({"--out", (t / "o.h5").string(), "--grid", "2x4x1"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.output.find("two sizes at most"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(t / "o.h5"));
}

}  // namespace
}  // namespace lrb
