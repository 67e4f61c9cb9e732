#include <gtest/gtest.h>

#include "suite/core/seeds.h"
#include "suite/core/sha256.h"

namespace lrb {

TEST(Sha256, KnownVector) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Seeds, StreamsDifferAndAreStable) {
  const auto a = derive_seed(1, 0, kStreamData);
  EXPECT_EQ(a, derive_seed(1, 0, kStreamData));
  EXPECT_NE(a, derive_seed(1, 1, kStreamData));
  EXPECT_NE(a, derive_seed(2, 0, kStreamData));
  EXPECT_NE(a, derive_seed(1, 0, kStreamOrder));
}

TEST(Seeds, RngIsPortableAndUnbiased) {
  Rng r(42);
  Rng r2(42);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(r.next(), r2.next());
  Rng u(7);
  std::vector<int> counts(10, 0);
  for (int i = 0; i < 100000; ++i) counts[u.below(10)]++;
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);
  for (int i = 0; i < 1000; ++i) {
    const double x = u.uniform();
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
    const auto b = u.between(-3, 3);
    EXPECT_GE(b, -3);
    EXPECT_LE(b, 3);
  }
}

}  // namespace lrb
