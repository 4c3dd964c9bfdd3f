#include "scenarios/flat_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace btsim::scenarios {
namespace {

TEST(FlatIndexTest, FindsWhatWasAddedAcrossGrowth) {
  std::vector<std::string> keys;
  FlatIndex index;
  for (int i = 0; i < 10'000; ++i) keys.push_back("key" + std::to_string(i));
  for (uint32_t i = 0; i < keys.size(); ++i) {
    const auto [value, added] = index.Emplace(
        HashString(keys[i]), i, [&](uint32_t v) { return keys[v] == keys[i]; });
    EXPECT_TRUE(added);
    EXPECT_EQ(value, i);
  }
  EXPECT_EQ(index.size(), keys.size());
  for (uint32_t i = 0; i < keys.size(); ++i) {
    const uint32_t* found = index.Find(
        HashString(keys[i]), [&](uint32_t v) { return keys[v] == keys[i]; });
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(*found, i);
  }
  const std::string absent = "absent";
  EXPECT_EQ(index.Find(HashString(absent),
                       [&](uint32_t v) { return keys[v] == absent; }),
            nullptr);
}

TEST(FlatIndexTest, KeepsTheFirstValueOfAKey) {
  FlatIndex index;
  const std::vector<std::string> keys = {"a", "b", "a"};
  auto emplace = [&](uint32_t i) {
    return index.Emplace(HashString(keys[i]), i,
                         [&](uint32_t v) { return keys[v] == keys[i]; });
  };
  EXPECT_TRUE(emplace(0).second);
  EXPECT_TRUE(emplace(1).second);
  const auto [value, added] = emplace(2);
  EXPECT_FALSE(added);
  EXPECT_EQ(value, 0u);
}

TEST(FlatIndexTest, CollidingHashesAreToldApartByThePredicate) {
  FlatIndex index;
  index.Reserve(4);
  for (uint32_t i = 0; i < 100; ++i) {
    EXPECT_TRUE(
        index.Emplace(42, i, [&](uint32_t v) { return v == i; }).second);
  }
  for (uint32_t i = 0; i < 100; ++i) {
    const uint32_t* found = index.Find(42, [&](uint32_t v) { return v == i; });
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(*found, i);
  }
  EXPECT_EQ(index.Find(7, [](uint32_t) { return true; }), nullptr);
}

}  // namespace
}  // namespace btsim::scenarios
