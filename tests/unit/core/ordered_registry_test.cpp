// OrderedRegistry: the self-registering attention kernels and report formats share it.
#include "suite/core/ordered_registry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lrb {
namespace {

struct Named {
  std::string name;
  std::string extension;
};

std::vector<std::string> names(OrderedRegistry<Named>& registry) {
  std::vector<std::string> out;
  for (const auto& e : registry.entries()) out.push_back(e.name);
  return out;
}

TEST(OrderedRegistry, ListsEntriesByTheirOrderNotByWhenTheyRegistered) {
  OrderedRegistry<Named> registry("widgets");
  registry.add(30, {"c", ""});
  registry.add(10, {"a", ""});
  registry.add(20, {"b", ""});
  EXPECT_EQ(names(registry), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(&registry.entries(), &registry.entries());  // sorted once, the same listing after
}

TEST(OrderedRegistry, AnEmptyRegistryListsNothing) {
  OrderedRegistry<Named> registry("widgets");
  EXPECT_TRUE(registry.entries().empty());
}

// A broken invariant aborts; the process already runs threads (LibTorch, MPI), so each
// death test starts afresh rather than forking.
class OrderedRegistryDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST(OrderedRegistryDeathTest, ASecondEntryWithOneNameOrOneOrderIsABug) {
  EXPECT_DEATH(
      {
        OrderedRegistry<Named> registry("widgets");
        registry.add(10, {"a", ""});
        registry.add(20, {"a", ""});
      },
      "two widgets register under the name 'a'");
  EXPECT_DEATH(
      {
        OrderedRegistry<Named> registry("widgets");
        registry.add(10, {"a", ""});
        registry.add(10, {"b", ""});
      },
      "widgets 'a' and 'b' register with one listing order \\(10\\)");
}

TEST(OrderedRegistryDeathTest, TheCallersOwnConflictCheckSeesEveryEarlierEntry) {
  auto same_extension = [](const Named& earlier, const Named& added) {
    LRB_CHECK(earlier.extension != added.extension, earlier.name + " and " + added.name + " share " + added.extension);
  };
  OrderedRegistry<Named> fine("widgets");
  fine.add(10, {"a", ".x"}, same_extension);
  fine.add(20, {"b", ".y"}, same_extension);
  EXPECT_EQ(names(fine), (std::vector<std::string>{"a", "b"}));
  EXPECT_DEATH(
      {
        OrderedRegistry<Named> registry("widgets");
        registry.add(10, {"a", ".x"}, same_extension);
        registry.add(20, {"b", ".y"}, same_extension);
        registry.add(30, {"c", ".x"}, same_extension);
      },
      "a and c share .x");
}

TEST(OrderedRegistryDeathTest, ARegistrationAfterTheListingWasReadIsABug) {
  EXPECT_DEATH(
      {
        OrderedRegistry<Named> registry("widgets");
        registry.add(10, {"a", ""});
        (void)registry.entries();
        registry.add(20, {"late", ""});
      },
      "'late' registers after the listing was read");
}

}  // namespace
}  // namespace lrb
